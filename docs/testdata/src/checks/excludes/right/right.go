package right

import "sync"

type Cache struct {
	mu sync.Mutex
	m  map[string]int
}

// example:start

//confined:excludes mu
func (c *Cache) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flushLocked()
}

//confined:requires mu
func (c *Cache) flushLocked() { clear(c.m) }

func (c *Cache) Reset() {
	c.mu.Lock()
	c.flushLocked()
	c.mu.Unlock()
}

// example:end
