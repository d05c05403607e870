package deferlock

import "sync"

type T struct {
	mu sync.Mutex
	n  int
}

// Defer after a conditional lock: released at return on the locked path.
func (t *T) conditional(c bool) {
	if c {
		t.mu.Lock()
		defer t.mu.Unlock()
	}
	t.n++
}

// A deferred closure unlocks.
func (t *T) closure() int {
	t.mu.Lock()
	defer func() {
		t.mu.Unlock()
	}()
	return t.n
}

// A deferred closure that does not unlock leaves the lock held on the
// error path only.
func (t *T) closureLeak(x int) int {
	t.mu.Lock()
	defer func() {
		t.n++
	}()
	if x > 0 {
		return x // want `T.mu taken at deferlock.go:31 is still held on this return path \(other paths release it\) \[lock-leak\]`
	}
	t.mu.Unlock()
	return 0
}

// Lock taken again after a deferred unlock registered: double lock.
func (t *T) again() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.Lock() // want `T.mu locked again while held since deferlock.go:44: self-deadlock \[double-lock\]`
}
