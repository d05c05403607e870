package leak

import (
	"errors"
	"sync"
)

type T struct {
	mu sync.Mutex
	n  int
}

func (t *T) early(x int) int {
	t.mu.Lock()
	if x < 0 {
		return 0 // want `T.mu taken at leak.go:14 is still held on this return path \(other paths release it\) \[lock-leak\]`
	}
	t.n += x
	t.mu.Unlock()
	return t.n
}

func (t *T) errPath(f func() error) error {
	t.mu.Lock()
	if err := f(); err != nil {
		return err // want `T.mu taken at leak.go:24 is still held on this return path \(other paths release it\) \[lock-leak\]`
	}
	t.mu.Unlock()
	return nil
}

func (t *T) loop(items []int) {
	for _, it := range items {
		t.mu.Lock() // want `T.mu may still be held from the previous loop iteration \(taken at leak.go:34\): Lock on the next iteration deadlocks \[lock-leak\]`
		if it == 0 {
			continue
		}
		t.n += it
		t.mu.Unlock()
	}
}

// Correct: deferred unlock on every path.
func (t *T) deferred(x int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if x < 0 {
		return errors.New("negative")
	}
	t.n = x
	return nil
}

// A lock helper that returns with the lock held on every path is an
// inferred acquires, not a leak.
func (t *T) lock() { t.mu.Lock() }

func (t *T) useHelper() {
	t.lock()
	t.n++
	t.mu.Unlock()
}

// Correct loop.
func (t *T) loopOK(items []int) {
	for _, it := range items {
		t.mu.Lock()
		if it == 0 {
			t.mu.Unlock()
			continue
		}
		t.n += it
		t.mu.Unlock()
	}
}

// Returns with the lock held and the func that releases it: a hand-off,
// not a leak.
func (t *T) grab(fail bool) (func(), error) {
	t.mu.Lock()
	if fail {
		t.mu.Unlock()
		return nil, errors.New("fail")
	}
	return t.release, nil
}

func (t *T) release() { t.mu.Unlock() }

// The same with a closure.
func (t *T) grabClosure(fail bool) func() {
	t.mu.Lock()
	if fail {
		t.mu.Unlock()
		return nil
	}
	return func() { t.mu.Unlock() }
}
