package right

import "sync"

type Cache struct {
	mu     sync.Mutex
	shared bool
	m      map[string]int
}

func (c *Cache) fill(k string) { c.m[k]++ }

// example:start

func (c *Cache) Load(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fill(k)
}

// example:end
