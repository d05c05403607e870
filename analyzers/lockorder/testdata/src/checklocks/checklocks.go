// Package checklocks is annotated gVisor style; the comments read as their
// //confined: equivalents.
package checklocks

import "sync"

type T struct {
	mu sync.Mutex
	// +checklocks:mu
	n int
}

// +checklocks:mu
func (t *T) incLocked() { t.n++ }

// +checklocksacquire:mu
func (t *T) lock() { t.mu.Lock() }

// +checklocksrelease:mu
func (t *T) unlock() { t.mu.Unlock() }

func (t *T) good() {
	t.lock()
	t.incLocked()
	t.unlock()
}

func (t *T) bad() {
	t.incLocked() // want `call to T.incLocked requires T.mu held exclusively, but it is not held here \[requires\]`
	t.n = 2       // want `write to T.n without holding T.mu \[guardedby\]`
}

// +checklocksignore
func (t *T) ignored() { t.n++ }
