package wrong

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

	c.mu.RLock()
	c.hits++ // want `\[guardedby-write-shared\]`
	c.mu.RUnlock()
	// example:end
}
