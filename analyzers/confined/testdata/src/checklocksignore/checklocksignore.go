// Package checklocksignore: a +checklocksignore is never reported as
// unused (checklocks places them where it reports, which is not always
// where confinelint does); one on a field is a property of the field.
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
	// +checklocksignore nothing below needs it: checklocks never calls one unused
	s.scratch++
	//confined:ignore nothing below needs it either // want `this //confined:ignore silences no finding; remove it \[unused-ignore\]`
	s.scratch++
}

// On a declaration, +checklocksignore is checklocks' "do not check this
// function": a property, silent even when there is nothing to silence.
//
// +checklocksignore
func (s *stats) unchecked() int { return s.hint }

// The confined spelling on a declaration is a suppression and must earn
// its keep.
//
//confined:ignore nothing here is reported // want `this //confined:ignore silences no finding; remove it \[unused-ignore\]`
func (s *stats) quiet() int { return s.hint }
