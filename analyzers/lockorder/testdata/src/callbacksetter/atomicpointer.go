package callbacksetter

import (
	"sync"
	"sync/atomic"
)

// A callback kept in an atomic.Pointer to a func (`g.fn.Store(&fn)`,
// called as `(*g.fn.Load())()`) is followed as one kept in an
// atomic.Value: a gauge whose value function, registered by a cache,
// locks the cache, read by a scrape that holds the gauge set's lock
// while the cache adds gauges under its own.
type funcGauge struct{ fn atomic.Pointer[func() int64] }

func (g *funcGauge) Value() int64 { return (*g.fn.Load())() }

type gaugeSet struct {
	mu     sync.Mutex
	gauges []*funcGauge
}

func (s *gaugeSet) addFunc(fn func() int64) {
	g := &funcGauge{}
	g.fn.Store(&fn)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gauges = append(s.gauges, g)
}

func (s *gaugeSet) scrape() (sum int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.gauges {
		sum += g.Value()
	}
	return sum
}

type expiryCache struct {
	mu      sync.Mutex
	expires map[string]int64
}

func (c *expiryCache) upsert(key string, at int64, s *gaugeSet) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.expires[key]; !ok {
		s.addFunc(func() int64 { // want `lock order inversion: gaugeSet.mu then expiryCache.mu in gaugeSet.scrape \(atomicpointer.go:\d+ -> atomicpointer.go:\d+ via funcGauge.Value -> expiryCache.upsert.func1\) but expiryCache.mu then gaugeSet.mu in expiryCache.upsert \(atomicpointer.go:\d+ -> atomicpointer.go:\d+ via gaugeSet.addFunc\) \[lock-order\]`
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.expires[key]
		})
	}
	c.expires[key] = at
}

// The fix: the value function reads a copy kept atomically. Silent.
type ttlCache struct {
	mu      sync.Mutex
	expires map[string]int64
	last    atomic.Int64
}

func (c *ttlCache) upsert(key string, at int64, s *gaugeSet) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.expires[key]; !ok {
		s.addFunc(func() int64 { return c.last.Load() })
	}
	c.expires[key] = at
	c.last.Store(at)
}
