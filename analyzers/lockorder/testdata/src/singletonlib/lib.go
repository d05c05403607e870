// Package singletonlib: a library's importers may make any number of
// its objects, so one allocation site in it proves no identity. The
// eviction callback of the main program's scenario stays silent here.
package singletonlib

import "sync"

type Cache struct {
	mu      sync.Mutex
	items   map[string]int
	onEvict func(string)
}

func newCache(onEvict func(string)) *Cache {
	return &Cache{items: map[string]int{}, onEvict: onEvict}
}

func (c *Cache) Add(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items[k] = len(c.items)
	if len(c.items) > 2 {
		c.evict()
	}
}

func (c *Cache) evict() {
	for k := range c.items {
		delete(c.items, k)
		c.onEvict(k)
		return
	}
}

func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}

type Store struct {
	hot     *Cache
	spilled []string
	sizes   []int
}

func NewStore() *Store {
	s := &Store{}
	s.hot = newCache(s.spill)
	return s
}

func (s *Store) spill(k string) {
	s.spilled = append(s.spilled, k)
	s.sizes = append(s.sizes, s.hot.Len())
}
