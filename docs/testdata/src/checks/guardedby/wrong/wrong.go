package wrong

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
	c.hits++ // want `write to Cache\.hits without holding Cache\.mu \[guardedby\]`
}

// example:end
