package wrong

import "sync"

type Cache struct {
	mu sync.RWMutex
	m  map[string]int
}

// example:start

func (c *Cache) Get(k string) int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.lookup(k) // want `\[double-lock\]`
}

func (c *Cache) lookup(k string) int {
	c.mu.RLock() // lookup locks too
	defer c.mu.RUnlock()
	return c.m[k]
}

// example:end
