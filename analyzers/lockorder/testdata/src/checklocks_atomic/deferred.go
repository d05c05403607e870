package checklocks_atomic

import (
	"sync"
	"sync/atomic"
)

// An atomic operation deferred or started as a goroutine is atomic like a
// call; the field's address given to an atomic operation as the value to
// store is not an atomic use of the field, it escapes.
type gauge struct {
	mu sync.Mutex
	// +checkatomic
	level int32
	// +checkatomic
	// +checklocks:mu
	mixed int32
	plain int32
	sink  atomic.Pointer[int32]
}

func (g *gauge) deferredAtomics() {
	defer atomic.StoreInt32(&g.level, 0)
	go atomic.AddInt32(&g.level, 1)
}

func (g *gauge) deferredPlain() {
	defer atomic.StoreInt32(&g.plain, 0) // want `gauge.plain is used with sync/atomic but not declared atomic \(\+checkatomic or //confined:atomic\) \[atomic\]`
	go atomic.AddInt32(&g.plain, 1)      // want `gauge.plain is used with sync/atomic but not declared atomic \(\+checkatomic or //confined:atomic\) \[atomic\]`
}

func (g *gauge) publishAddress() {
	g.sink.Store(&g.level) // want `gauge.level is declared atomic but accessed without sync/atomic \[atomic\]`
}

// A deferred write runs when the function returns: after the unlock
// deferred after it, the lock is no longer held.
func (g *gauge) deferredAfterUnlock() {
	g.mu.Lock()
	defer atomic.StoreInt32(&g.mixed, 0) // want `write to gauge.mixed without holding gauge.mu \[guardedby\]`
	defer g.mu.Unlock()
}

func (g *gauge) deferredBeforeUnlock() {
	g.mu.Lock()
	defer g.mu.Unlock()
	defer atomic.StoreInt32(&g.mixed, 0)
}
