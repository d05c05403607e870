// Package gatelock: two orders of a pair of locks that always run under
// one more lock (a gate) cannot deadlock; one order outside the gate can.
package gatelock

import "sync"

// Backend: Defrag and the commit path take mu and readMu in opposite
// orders, both under batch. Silent.
type Backend struct {
	batch  sync.Mutex
	mu     sync.RWMutex
	readMu sync.RWMutex
}

func (b *Backend) Defrag() {
	b.batch.Lock()
	defer b.batch.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.readMu.Lock()
	b.readMu.Unlock()
}

func (b *Backend) Commit() {
	b.batch.Lock()
	b.commit()
	b.batch.Unlock()
}

// Unlock ends a batch the caller holds, committing first.
func (b *Backend) Unlock() {
	b.commit()
	b.batch.Unlock()
}

func (b *Backend) commit() {
	b.readMu.Lock()
	b.begin()
	b.readMu.Unlock()
}

func (b *Backend) begin() {
	b.mu.RLock()
	b.mu.RUnlock()
}

// Cache: One orders a before b under the gate, Two the other way
// without it.
type Cache struct {
	gate, a, b sync.Mutex
}

func (c *Cache) One() {
	c.gate.Lock()
	c.a.Lock()
	c.b.Lock()
	c.b.Unlock()
	c.a.Unlock()
	c.gate.Unlock()
}

func (c *Cache) Two() {
	c.b.Lock()
	c.a.Lock() // want `lock order inversion: Cache.a then Cache.b in Cache.One .* but Cache.b then Cache.a in Cache.Two`
	c.a.Unlock()
	c.b.Unlock()
}

// Pool: swap runs under the gate from Rotate, but Swap exports it to
// callers that may not hold the gate.
type Pool struct {
	gate, x, y sync.Mutex
}

func (p *Pool) Rotate() {
	p.gate.Lock()
	p.x.Lock()
	p.y.Lock()
	p.y.Unlock()
	p.x.Unlock()
	p.Swap()
	p.gate.Unlock()
}

func (p *Pool) Swap() {
	p.y.Lock()
	p.x.Lock() // want `lock order inversion: Pool.x then Pool.y in Pool.Rotate .* but Pool.y then Pool.x in Pool.Swap`
	p.x.Unlock()
	p.y.Unlock()
}

// Stripes: one pass, serialized by gc, holds a hash stripe, then an
// entry, then (for another index) a ref stripe; entries are never
// locked before a stripe elsewhere. The closure runs only where gc is
// held. Silent.
type Stripes struct {
	gc    sync.Mutex
	locks []stripeLock
	items map[int]*Item
}

type stripeLock struct {
	sync.RWMutex
	_ [40]byte
}

type Item struct {
	sync.Mutex
	ref int
}

func (s *Stripes) GC() {
	s.gc.Lock()
	defer s.gc.Unlock()
	check := func(i int, it *Item) {
		it.Lock()
		if j := it.ref % len(s.locks); j != i {
			s.locks[j].Lock()
			delete(s.items, it.ref)
			s.locks[j].Unlock()
		}
		it.Unlock()
	}
	for i := range s.locks {
		s.locks[i].Lock()
		for _, it := range s.items {
			check(i, it)
		}
		s.locks[i].Unlock()
	}
}
