// Modelled on prometheus client_golang prometheus/registry.go (Registry.Gather)
// and counter/gauge vectors: the registry holds its RWMutex for reading while
// it loops over registered collectors and calls Collect on each. Every
// collector guards its own state with its own mutex and never calls back into
// the registry, so registry.mtx -> collector.mtx is the only ordering.
package main

import (
	"fmt"
	"sort"
	"sync"
)

type Metric struct {
	Name  string
	Value float64
}

type Collector interface {
	Describe() string
	Collect() []Metric
}

type counterVec struct {
	name string
	mtx  sync.Mutex
	vals map[string]float64
}

func newCounterVec(name string) *counterVec {
	return &counterVec{name: name, vals: make(map[string]float64)}
}

func (c *counterVec) Describe() string { return c.name }

func (c *counterVec) Inc(label string) {
	c.mtx.Lock()
	c.vals[label]++
	c.mtx.Unlock()
}

func (c *counterVec) Collect() []Metric {
	c.mtx.Lock()
	defer c.mtx.Unlock()
	out := make([]Metric, 0, len(c.vals))
	for l, v := range c.vals {
		out = append(out, Metric{Name: c.name + "{" + l + "}", Value: v})
	}
	return out
}

type gauge struct {
	name string
	mtx  sync.RWMutex
	val  float64
}

func (g *gauge) Describe() string { return g.name }
func (g *gauge) Set(v float64)    { g.mtx.Lock(); g.val = v; g.mtx.Unlock() }
func (g *gauge) Collect() []Metric {
	g.mtx.RLock()
	defer g.mtx.RUnlock()
	return []Metric{{Name: g.name, Value: g.val}}
}

type Registry struct {
	mtx        sync.RWMutex
	collectors map[string]Collector
}

func NewRegistry() *Registry { return &Registry{collectors: make(map[string]Collector)} }

func (r *Registry) Register(c Collector) error {
	r.mtx.Lock()
	defer r.mtx.Unlock()
	if _, ok := r.collectors[c.Describe()]; ok {
		return fmt.Errorf("duplicate collector %q", c.Describe())
	}
	r.collectors[c.Describe()] = c
	return nil
}

// Gather calls Collect on every collector while holding r.mtx for reading.
func (r *Registry) Gather() []Metric {
	r.mtx.RLock()
	defer r.mtx.RUnlock()
	var all []Metric
	for _, c := range r.collectors {
		all = append(all, c.Collect()...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
}

func main() {
	reg := NewRegistry()
	reqs := newCounterVec("http_requests_total")
	inflight := &gauge{name: "http_inflight"}
	_ = reg.Register(reqs)
	_ = reg.Register(inflight)
	if err := reg.Register(reqs); err != nil {
		fmt.Println("register:", err)
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < 50; i++ {
			reqs.Inc([]string{"GET", "POST"}[i%2])
			inflight.Set(float64(i % 7))
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < 5; i++ {
			_ = reg.Gather()
		}
	}()
	wg.Wait()
	for _, m := range reg.Gather() {
		fmt.Printf("%s %v\n", m.Name, m.Value)
	}
}
