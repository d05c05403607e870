// Package checklocks_musthold: a guarded access or a call requiring a lock
// needs the lock held on every path to it.
package checklocks_musthold

import "sync"

type gauge struct {
	mu sync.Mutex
	// +checklocks:mu
	n int
}

// +checklocks:g.mu
func (g *gauge) addLocked(d int) { g.n += d }

func (g *gauge) sometimes(c bool) {
	if c {
		g.mu.Lock()
	}
	g.n++          // want `write to gauge.n with gauge.mu held on some paths only \(taken at musthold.go:18\): it must be held on every path \[guardedby\]`
	g.addLocked(1) // want `call to gauge.addLocked requires gauge.mu held exclusively, but it is held on some paths only \[requires\]`
	if c {
		g.mu.Unlock()
	}
}

func (g *gauge) bothBranches(c bool) {
	if c {
		g.mu.Lock()
	} else {
		g.mu.Lock()
	}
	g.n++
	g.addLocked(1)
	g.mu.Unlock()
}
