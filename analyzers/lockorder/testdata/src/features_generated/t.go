// Package features_generated: lock findings in a generated file are not
// reported; the same code written by hand is.
package features_generated

import "sync"

type T struct {
	mu sync.Mutex
	n  int //confined:guardedby mu
}

func (t *T) handWritten() {
	t.mu.Lock()
	t.mu.Lock() // want `T.mu locked again while held since t.go:13: self-deadlock \[double-lock\]`
	t.n = 1
	t.mu.Unlock()
}
