package wrong

import "sync"

type Cache struct {
	mu sync.RWMutex
	m  map[string]int
}

func (c *Cache) Put(k string, v int) {
	// example:start

	c.mu.RLock()
	if c.m[k] == 0 {
		c.mu.Lock() // want `\[lock-upgrade\]`
		c.m[k] = v
		c.mu.Unlock()
	}
	c.mu.RUnlock()
	// example:end
}
