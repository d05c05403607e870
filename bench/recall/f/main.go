package main

import "sync"

type Store interface{ Get(k string) int }

type cache struct {
	mu   sync.RWMutex
	m    map[string]int
	back Store
}

func (c *cache) Get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.m[k]; ok {
		return v
	}
	return c.back.Get(k)
}

func (c *cache) Refresh() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.m {
		c.m[k] = c.Get(k)
	}
}

type disk struct{}

func (disk) Get(k string) int { return len(k) }

func main() {
	var s Store = disk{}
	c := &cache{m: map[string]int{"a": 1}, back: s}
	var _ Store = c
	c.Refresh()
}
