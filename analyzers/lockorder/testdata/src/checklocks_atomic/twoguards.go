package checklocks_atomic

import (
	"sync"
	"sync/atomic"
)

// A reservoir's value is atomic and guarded by two locks: an atomic read needs
// neither, an atomic write needs both held exclusively. One atomic
// operation short of its locks is one finding, however many it lacks.
type reservoir struct {
	mu      sync.Mutex
	resetMu sync.RWMutex
	// +checkatomic
	// +checklocks:mu
	// +checklocks:resetMu
	value int32
}

func (g *reservoir) addWithoutLocks() {
	atomic.AddInt32(&g.value, 1) // want `atomic write to reservoir.value without holding reservoir.mu; write to reservoir.value without holding reservoir.resetMu \[guardedby\]`
}

func (g *reservoir) addUnderReadLock() {
	g.resetMu.RLock()
	atomic.AddInt32(&g.value, 1) // want `atomic write to reservoir.value without holding reservoir.mu; write to reservoir.value with reservoir.resetMu only read-locked \(since twoguards.go:25\): writes need Lock \[guardedby\]`
	g.resetMu.RUnlock()
}

func (g *reservoir) addOneMissing() {
	g.resetMu.Lock()
	atomic.AddInt32(&g.value, 1) // want `atomic write to reservoir.value without holding reservoir.mu \[guardedby\]`
	g.resetMu.Unlock()
}

func (g *reservoir) addLocked() {
	g.mu.Lock()
	g.resetMu.Lock()
	atomic.AddInt32(&g.value, 1)
	g.resetMu.Unlock()
	g.mu.Unlock()
}

func (g *reservoir) read() int32 {
	return atomic.LoadInt32(&g.value)
}
