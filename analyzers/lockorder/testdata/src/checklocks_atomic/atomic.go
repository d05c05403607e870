// Package checklocks_atomic: in a struct annotated checklocks style, a
// field used through a sync/atomic function must be declared atomic; a
// non-atomic write to a field both atomic and guarded, without the lock,
// is two findings.
package checklocks_atomic

import (
	"sync"
	"sync/atomic"
)

type meter struct {
	mu sync.Mutex
	// +checklocks:mu
	total int64
	plain int64
	// +checkatomic
	hits int64
	// +checkatomic
	// +checklocks:mu
	mixed int64
	typed atomic.Int64
}

func (m *meter) bad() {
	atomic.AddInt64(&m.plain, 1)   // want `meter.plain is used with sync/atomic but not declared atomic \(\+checkatomic or //confined:atomic\) \[atomic\]`
	_ = atomic.LoadInt64(&m.total) // want `meter.total is used with sync/atomic but not declared atomic \(\+checkatomic or //confined:atomic\) \[atomic\]`
	m.mixed = 1                    // want `meter.mixed is declared atomic but accessed without sync/atomic \[atomic\]` `write to meter.mixed without holding meter.mu \[guardedby\]`
}

// bad2 touches no lock, so the lock engine would skip it as lock-free:
// the atomic check must still run.
func (m *meter) bad2() int64 {
	return atomic.LoadInt64(&m.plain) // want `meter.plain is used with sync/atomic but not declared atomic \(\+checkatomic or //confined:atomic\) \[atomic\]`
}

func (m *meter) good() {
	atomic.AddInt64(&m.hits, 1)
	m.typed.Add(1)
	m.plain++
	m.mu.Lock()
	atomic.StoreInt64(&m.mixed, 2)
	m.total++
	m.mu.Unlock()
	_ = atomic.LoadInt64(&m.mixed)
}

// An unannotated struct's atomic use is not checked.
type free struct{ n int64 }

func (f *free) inc() { atomic.AddInt64(&f.n, 1) }
