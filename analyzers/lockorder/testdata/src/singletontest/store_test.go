// Package singletontest: a package of _test.go files only is a program
// of its own, and each Test function runs once: the cache the test makes
// is the one object of its type.
package singletontest

import (
	"sync"
	"testing"
)

type cache struct {
	mu      sync.RWMutex
	items   map[string]int
	onEvict func(string)
}

func newCache(onEvict func(string)) *cache {
	return &cache{items: map[string]int{}, onEvict: onEvict}
}

func (c *cache) Add(k string) {
	c.mu.Lock()
	c.items[k] = len(c.items)
	if len(c.items) > 2 {
		c.evict() // want `cache.mu locked again by cache.evict -> store.spill -> cache.Len .*the program makes one cache`
	}
	c.mu.Unlock()
}

func (c *cache) evict() {
	for k := range c.items {
		delete(c.items, k)
		if c.onEvict != nil {
			c.onEvict(k)
		}
		return
	}
}

func (c *cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.items)
}

type store struct {
	hot   *cache
	sizes []int
}

func newStore() *store {
	s := &store{}
	s.hot = newCache(s.spill)
	return s
}

func (s *store) spill(string) { s.sizes = append(s.sizes, s.hot.Len()) }

func TestEvict(t *testing.T) {
	s := newStore()
	for _, k := range []string{"a", "b", "c"} {
		s.hot.Add(k)
	}
}

// A benchmark runs many times: the object it makes is one per run, and
// a type made there is no singleton. Silent.

type meter struct {
	mu    sync.Mutex
	n     int
	flush func()
}

func (m *meter) Mark() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n++
	m.flush()
}

func (m *meter) Count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

type reporter struct{ m *meter }

func (r *reporter) flush() { _ = r.m.Count() }

func BenchmarkMark(b *testing.B) {
	r := &reporter{}
	r.m = &meter{flush: r.flush}
	for range b.N {
		r.m.Mark()
	}
}
