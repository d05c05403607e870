// Package features_methodexpr: locks taken through method values and
// method expressions, called directly or started as goroutines.
package features_methodexpr

import "sync"

type Store struct {
	mu sync.Mutex
	n  int
}

func (s *Store) bump() {
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
}

func (s *Store) viaValue() {
	f := s.bump
	s.mu.Lock()
	defer s.mu.Unlock()
	f() // want `Store.mu locked again by Store.bump \(at methodexpr.go:\d+\) while held since methodexpr.go:\d+: self-deadlock \[double-lock\]`
}

// The method expression as a goroutine body: it takes mu on its own
// goroutine, and the starter's later Lock just waits for it. Silent.
// (Direct calls of (*Store).bump are in features_lockbugs.)
// A goroutine does not inherit its starter's locks: silent.
func (s *Store) async() {
	s.mu.Lock()
	defer s.mu.Unlock()
	go (*Store).bump(s)
	go s.bump()
	s.n++
}
