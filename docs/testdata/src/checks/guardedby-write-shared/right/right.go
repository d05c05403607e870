package right

import "sync"

type Cache struct {
	mu sync.RWMutex
	// example:start

	//confined:guardedby mu
	hits int
	// example:end
}

func (c *Cache) Hit() {
	// example:start

	c.mu.Lock()
	c.hits++
	c.mu.Unlock()
	// example:end
}
