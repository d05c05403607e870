package main

import "sync"

type config struct {
	mu   sync.Mutex
	once sync.Once
	v    map[string]string
}

func (c *config) load() {
	c.mu.Lock()
	c.v = map[string]string{}
	c.mu.Unlock()
}

func (c *config) Get(k string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.once.Do(c.load)
	return c.v[k]
}

func main() {
	c := &config{}
	_ = c.Get("a")
}
