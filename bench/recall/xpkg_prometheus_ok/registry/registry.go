// Package registry is a metrics registry modeled on prometheus/client_golang.
package registry

import "sync"

// Collector reports metrics when the registry is gathered.
type Collector interface {
	Collect(emit func(name string, v float64))
}

// Registry holds collectors.
type Registry struct {
	mu         sync.Mutex
	collectors []Collector
	gathers    int
}

// Register adds c.
func (r *Registry) Register(c Collector) {
	r.mu.Lock()
	r.collectors = append(r.collectors, c)
	r.mu.Unlock()
}

// Gather calls every collector while holding the registry lock
// (order: Registry.mu, then the collector's own lock).
func (r *Registry) Gather() map[string]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]float64)
	for _, c := range r.collectors {
		c.Collect(func(n string, v float64) { out[n] = v })
	}
	r.gathers++
	return out
}

// Update runs fn while holding the registry lock so that collector state can
// be changed atomically with respect to Gather.
func (r *Registry) Update(fn func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fn()
}
