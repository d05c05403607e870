// Package checklocks_instances: locks of local values are per instance
// (no "any lock of the class" fallback), and index expressions are part
// of the path, so s[i].mu then s[i].f meet.
package checklocks_instances

import "sync"

type slot struct {
	mu sync.Mutex
	// +checklocks:mu
	val int
}

type ring struct {
	slots []*slot
	fixed [4]slot
}

func otherInstance(xs, ys []*slot) {
	x, y := xs[0], ys[0]
	x.mu.Lock()
	y.val = 1 // want `write to slot.val without holding slot.mu \[guardedby\]`
	x.mu.Unlock()
}

func sameIndex(r *ring, i int) {
	r.slots[i].mu.Lock()
	r.slots[i].val++
	r.slots[i].mu.Unlock()
}

func constantIndex(r *ring) {
	r.fixed[2].mu.Lock()
	r.fixed[2].val++
	r.fixed[2].mu.Unlock()
}

func otherIndex(r *ring, i, j int) {
	r.slots[i].mu.Lock()
	r.slots[j].val++ // want `write to slot.val without holding slot.mu \[guardedby\]`
	r.slots[i].mu.Unlock()
}

// A closure indexing with a captured variable meets the caller's lock.
func capturedIndex(r *ring) {
	i := len(r.slots) - 1
	r.slots[i].mu.Lock()
	defer r.slots[i].mu.Unlock()
	func() {
		r.slots[i].val++
	}()
}
