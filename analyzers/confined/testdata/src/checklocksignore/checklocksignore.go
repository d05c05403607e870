// Package checklocksignore: an unused +checklocksignore is named as
// written; one on a field is a property of the field, never unused.
package checklocksignore

import "sync"

type stats struct {
	mu sync.Mutex
	// +checklocks:mu
	n int
	// +checklocksignore
	scratch int
	hint    int // +checklocksignore: written before publication
}

func (s *stats) bump() {
	s.n++ // +checklocksignore: callers hold s.mu
	// +checklocksignore nothing below needs it // want `this \+checklocksignore silences no finding; remove it \[unused-ignore\]`
	s.scratch++
}
