// Package branches: the walk follows branch conditions. A lock taken and
// released under the same condition is balanced; a branch a constant rules
// out (a constant condition, a parameter bound to a constant at the call)
// never runs, and what the live path takes is taken for sure.
package branches

import "sync"

type Log struct {
	mu        sync.Mutex
	entries   []string
	replaying bool
}

// apply locks only while replaying, in every iteration. Silent.
func (l *Log) apply(items []string, replaying bool) {
	for _, it := range items {
		if replaying {
			l.mu.Lock()
		}
		l.entries = append(l.entries, it)
		if replaying {
			l.mu.Unlock()
		}
	}
}

// applyField tests the same field twice. Silent.
func (l *Log) applyField(items []string) {
	for _, it := range items {
		if l.replaying {
			l.mu.Lock()
		}
		l.entries = append(l.entries, it)
		if l.replaying {
			l.mu.Unlock()
		}
	}
}

// mismatched unlocks under the opposite condition: while replaying, the
// lock is still held when the next iteration takes it.
func (l *Log) mismatched(items []string, replaying bool) {
	for _, it := range items {
		if replaying {
			l.mu.Lock() // want `Log.mu may still be held from the previous loop iteration`
		}
		l.entries = append(l.entries, it)
		if !replaying {
			l.mu.Unlock()
		}
	}
}

const debug = false

// trace's second Lock is dead code. Silent.
func (l *Log) trace() {
	l.mu.Lock()
	if debug {
		l.mu.Lock()
	}
	l.mu.Unlock()
}

type Cache struct {
	mu sync.Mutex
	m  map[string]int
}

// get takes the lock unless its caller holds it already.
func (c *Cache) get(k string, locked bool) int {
	if !locked {
		c.mu.Lock()
		defer c.mu.Unlock()
	}
	return c.m[k]
}

func (c *Cache) Get(k string) int { return c.get(k, false) }

// Update holds the lock and says so. Silent.
func (c *Cache) Update(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[k] = c.get(k, true) + 1
}

// Broken holds the lock but says it does not.
func (c *Cache) Broken(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[k] = c.get(k, false) + 1 // want `Cache.mu locked again by Cache.get .* while held since`
}

var _ = []any{(*Log).apply, (*Log).applyField, (*Log).mismatched, (*Log).trace}

// Options holds optional settings: a pointer tested against nil and the
// value it points to tested after, under one path. Silent, no crash.
type Options struct {
	mu      sync.Mutex
	verbose *bool
	name    *string
}

func (o *Options) Describe() string {
	if o.verbose != nil {
		o.mu.Lock()
	}
	s := ""
	if o.verbose != nil && *o.verbose {
		s = "verbose"
	}
	if o.name != nil && *o.name == "x" {
		s += "x"
	}
	if o.verbose != nil {
		o.mu.Unlock()
	}
	return s
}
