package wrong

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
	clear(c.m)
}

func (c *Cache) Reset() {
	c.mu.Lock()
	c.Flush() // want `call to Cache\.Flush while holding Cache\.mu .*\[excludes\]`
	c.mu.Unlock()
}

// example:end
