package right

import "sync"

type Cache struct {
	mu sync.Mutex
	m  map[string]int
}

// example:start

//confined:requires mu
func (c *Cache) evictLocked() { clear(c.m) }

func (c *Cache) Trim() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evictLocked()
}

// example:end
