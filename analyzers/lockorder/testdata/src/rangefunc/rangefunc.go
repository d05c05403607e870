package rangefunc

import "sync"

type T struct {
	mu sync.Mutex
	n  int //confined:guardedby mu
	xs []int
}

func (t *T) each(yield func(int) bool) {
	for _, x := range t.xs {
		if !yield(x) {
			return
		}
	}
}

// The body runs synchronously: it is checked with the caller's locks.
func (t *T) sumHeld() {
	t.mu.Lock()
	for v := range t.each {
		t.n += v
	}
	t.mu.Unlock()
}

func (t *T) sumInBody() {
	for v := range t.each {
		t.mu.Lock()
		t.n += v
		t.mu.Unlock()
	}
}

func (t *T) relock() {
	t.mu.Lock()
	for range t.each {
		t.mu.Lock() // want `T.mu locked again while held since rangefunc.go:37: self-deadlock \[double-lock\]`
		t.mu.Unlock()
	}
	t.mu.Unlock()
}
