package callbacksetter

import "sync"

// A registration that wraps the func it is given in a closure of its own
// (a metrics library adapting a gauge's callback): the closure is what
// the registry keeps and later calls under its lock, and what it calls is
// whatever the wrapper's callers passed.

type registry struct {
	mu        sync.Mutex
	callbacks []func() int64
}

func (r *registry) add(cb func() int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.callbacks = append(r.callbacks, cb)
}

// collect runs every callback with the registry locked.
func (r *registry) collect() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var sum int64
	for _, cb := range r.callbacks {
		sum += cb()
	}
	return sum
}

var metrics = &registry{}

func newGauge(callback func() int64) {
	metrics.add(func() int64 { return callback() })
}

type director struct {
	mu      sync.RWMutex
	leaders map[int]bool
}

func newDirector() *director {
	d := &director{leaders: map[int]bool{}}
	newGauge(func() int64 {
		d.mu.RLock()
		defer d.mu.RUnlock()
		return int64(len(d.leaders))
	})
	return d
}

// addLeader registers the new leader's gauge with the director locked:
// the registry's lock under the director's, against a collection taking
// the director's under the registry's.
func (d *director) addLeader(id int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.leaders[id] = true
	newGauge(func() int64 { return int64(id) }) // want `lock order inversion: registry.mu then director.mu in registry.collect .*via newGauge.func1 -> newDirector.func1`
}

// The correct counterpart: the gauge counts with an atomic the director
// updates, so no callback takes the director's lock.
type counter struct {
	mu sync.Mutex
	n  int64
}

// counters keeps only the counters' gauges, so that what it calls is
// known: the correct side is judged on its own code, not on a registry
// shared with the director's.
type counters struct {
	mu        sync.Mutex
	callbacks []func() int64
}

func (r *counters) add(cb func() int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.callbacks = append(r.callbacks, cb)
}

func (r *counters) collect() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var sum int64
	for _, cb := range r.callbacks {
		sum += cb()
	}
	return sum
}

var counts = &counters{}

func newCounterGauge(callback func() int64) {
	counts.add(func() int64 { return callback() })
}

func newCounter() *counter {
	c := &counter{}
	newCounterGauge(func() int64 { return 1 })
	return c
}

func (c *counter) add() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	newCounterGauge(func() int64 { return 2 })
}

func useWrapped() {
	d := newDirector()
	go d.addLeader(1)
	go metrics.collect()
	c := newCounter()
	go c.add()
	go counts.collect()
}
