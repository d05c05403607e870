package right

import "sync"

type Cache struct {
	mu sync.Mutex
	// example:start

	//confined:guardedby mu
	hits int
	// example:end
}

// example:start

func (c *Cache) Hit() {
	c.mu.Lock()
	c.hits++
	c.mu.Unlock()
}

// example:end
