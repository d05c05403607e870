package right

import "sync"

// example:start

type Cache struct {
	mu sync.Mutex
	//confined:guardedby mu
	hits int
}

// example:end

func (c *Cache) Hit() {
	c.mu.Lock()
	c.hits++
	c.mu.Unlock()
}

func (c *Cache) Hits() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits
}
