package wrong

import "sync"

// example:start

type Cache struct {
	mu   sync.Mutex
	hits int // want `Cache\.hits: add //confined:guardedby mu \(rank 1 of 1\): mu is held at 2 of 2 accesses \[suggest-guardedby\]`
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
