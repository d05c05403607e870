package right

import "sync"

type Cache struct {
	mu sync.RWMutex
	m  map[string]int
}

// example:start

func (c *Cache) Get(k string) int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.lookupLocked(k)
}

//confined:requires_shared mu
func (c *Cache) lookupLocked(k string) int {
	return c.m[k]
}

// example:end
