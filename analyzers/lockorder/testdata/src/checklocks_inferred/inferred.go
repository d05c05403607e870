// Package checklocks_inferred: in a struct that annotates some fields, a
// field always accessed with a sibling lock of the same object held looks
// like a forgotten guard (checklocks' "may require checklocks annotation").
package checklocks_inferred

import "sync"

type session struct {
	mu sync.Mutex
	rw sync.RWMutex

	// +checklocks:mu
	state int

	pending int // want `session.pending is accessed with session.mu held at 3 of its 3 accesses but is not declared guarded by it: .*//confined:guardedby mu \(\+checklocks:mu\).* \[guardedby-missing\]`

	// Read under the lock, written once at construction only: no guard
	// needed (construction is not an access).
	name string

	// Accessed with and without the lock: no majority.
	hits int

	// A property of the field: not inferred.
	// +checklocksignore
	scratch int

	// Guarded by rw already; mu held at every access too is incidental.
	// +checklocks:rw
	view int

	other *session
	// Accessed under another session's lock, never its own object's.
	linked int
}

func newSession(name string) *session {
	s := &session{name: name}
	s.pending = 0
	return s
}

func (s *session) push() {
	s.mu.Lock()
	s.pending++
	s.state++
	s.hits++
	s.mu.Unlock()
}

func (s *session) drain() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.pending
	s.pending = 0
	_ = s.name
	return n
}

func (s *session) peek() int {
	s.hits++
	s.scratch++
	return s.hits
}

func (s *session) scribble() {
	s.mu.Lock()
	s.scratch = 1
	s.rw.Lock()
	s.view++
	s.rw.Unlock()
	s.mu.Unlock()
}

func (s *session) look() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rw.RLock()
	defer s.rw.RUnlock()
	return s.view
}

func (s *session) link() {
	s.other.mu.Lock()
	s.linked++
	s.other.mu.Unlock()
}

// An unannotated struct is left to the suggest analyzer.
type plain struct {
	mu sync.Mutex
	n  int
}

func (p *plain) inc() {
	p.mu.Lock()
	p.n++
	p.mu.Unlock()
}
