// Package iterations: a callee that takes, on every iteration of a loop
// it always runs, the lock its caller holds deadlocks whenever the loop
// iterates; a take behind a branch is still not a double lock.
package iterations

import "sync"

type Registry struct {
	mu    sync.RWMutex
	m     map[string]int
	names []string
	kids  []*Registry
	dirty bool

	listMu sync.RWMutex
}

func (r *Registry) refresh(name string) {
	r.mu.Lock()
	r.m[name]++
	r.mu.Unlock()
}

// refreshAll locks r.mu once per name.
func (r *Registry) refreshAll() {
	for _, name := range r.names {
		r.refresh(name)
	}
}

func (r *Registry) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refreshAll() // want `Registry.mu locked again by Registry.refreshAll -> Registry.refresh \(at iterations.go:\d+\) while held since iterations.go:\d+: self-deadlock \[double-lock\]`
}

// Nested loops, both run on every path.
func (r *Registry) refreshGroups(groups [][]string) {
	for _, g := range groups {
		for _, name := range g {
			r.refresh(name)
		}
	}
}

func (r *Registry) ResetGroups(groups [][]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refreshGroups(groups) // want `Registry.mu locked again by Registry.refreshGroups -> Registry.refresh \(at iterations.go:\d+\) while held since iterations.go:\d+: self-deadlock \[double-lock\]`
}

// A counted loop.
func (r *Registry) bumpN(n int) {
	for i := 0; i < n; i++ {
		r.refresh("n")
	}
}

func (r *Registry) Bump(n int) {
	r.mu.Lock()
	r.bumpN(n) // want `Registry.mu locked again by Registry.bumpN -> Registry.refresh \(at iterations.go:\d+\) while held since iterations.go:\d+: self-deadlock \[double-lock\]`
	r.mu.Unlock()
}

// Size read-locks r.mu.
func (r *Registry) Size() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.m)
}

// each calls fn for every name, under the list lock only.
func (r *Registry) each(fn func(string)) {
	r.listMu.RLock()
	defer r.listMu.RUnlock()
	for _, n := range r.names {
		fn(n)
	}
}

// The notifiee called in the loop reads the registry again under the
// caller's read lock: behind a waiting writer the second RLock blocks.
func (r *Registry) Sweep() {
	r.mu.RLock()
	defer r.mu.RUnlock()
	r.each(func(string) { _ = r.Size() }) // want `RLock of Registry.mu by Registry.each -> Registry.Sweep.func1 -> Registry.Size \(at iterations.go:\d+\) while already read-locked since iterations.go:\d+: deadlocks behind a waiting writer \[double-lock\]`
}

func (r *Registry) Add(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m[name] = 0
}
