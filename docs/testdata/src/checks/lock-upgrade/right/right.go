package right

import "sync"

type Cache struct {
	mu sync.RWMutex
	m  map[string]int
}

func (c *Cache) Put(k string, v int) {
	// example:start

	c.mu.Lock()
	if c.m[k] == 0 {
		c.m[k] = v
	}
	c.mu.Unlock()
	// example:end
}
