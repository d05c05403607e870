package right

import "sync"

type Cache struct {
	mu sync.Mutex
	m  map[string]int
}

// example:start

//confined:requires mu
func (c *Cache) get(k string) int { return c.m[k] }

// example:end
