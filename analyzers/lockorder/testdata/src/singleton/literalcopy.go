package main

import "sync"

// A constructor that builds its object in a variable and returns the
// variable's address (`res := expiring{...}; return &res`) makes one
// object, as `&expiring{...}` does: SSA builds the literal in a
// temporary and copies it into res, which is no second object.

type expiring struct {
	mu      sync.Mutex
	items   map[string]int
	onEvict func(string)
}

func newExpiring(onEvict func(string)) *expiring {
	res := expiring{items: map[string]int{}, onEvict: onEvict}
	return &res
}

func (c *expiring) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}

func (c *expiring) purge() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.items {
		delete(c.items, k)
		c.onEvict(k) // want `expiring.mu locked again by runExpiring.func1 -> expiring.Len .*the program makes one expiring \(at literalcopy.go:\d+\)`
	}
}

// Correct: two objects made from one literal copied twice are two
// caches, and the callback of one reads the other.
type pool struct {
	mu      sync.Mutex
	conns   map[string]int
	onClose func(string)
}

func newPools(onClose func(string)) (*pool, *pool) {
	p := pool{conns: map[string]int{}, onClose: onClose}
	q := p
	return &p, &q
}

func (p *pool) Size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

func (p *pool) drain() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k := range p.conns {
		delete(p.conns, k)
		p.onClose(k)
	}
}

func runExpiring() {
	var c *expiring
	c = newExpiring(func(string) { _ = c.Len() })
	c.purge()

	var other *pool
	a, b := newPools(func(string) { _ = other.Size() })
	other = b
	a.drain()
}
