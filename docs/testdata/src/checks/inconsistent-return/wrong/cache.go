package wrong

import "sync"

type Cache struct {
	mu     sync.Mutex
	shared bool
	m      map[string]int
}

func (c *Cache) fill(k string) { c.m[k]++ }

// example:start

func (c *Cache) Load(k string) { // want `\[inconsistent-return\]`
	if c.shared {
		c.mu.Lock()
	}
	c.fill(k)
}

// example:end
