package trylock

import "sync"

type T struct {
	mu sync.Mutex
	n  int
}

func (t *T) try() bool {
	if !t.mu.TryLock() {
		return false
	}
	defer t.mu.Unlock()
	t.n++
	return true
}

func (t *T) tryPositive() {
	if t.mu.TryLock() {
		t.n++
		t.mu.Unlock()
	}
}

func (t *T) tryTwice() {
	if t.mu.TryLock() {
		t.mu.Lock() // want `T.mu locked again while held since trylock.go:27: self-deadlock \[double-lock\]`
		t.mu.Unlock()
		t.mu.Unlock()
	}
}
