// Package capturedcell: a closure kept in a variable that another closure
// captures lives in a heap cell; a call through the variable, here or in
// the other closure, still runs it (and its unlock).
package capturedcell

import (
	"errors"
	"sync"
)

type Server struct {
	mu sync.Mutex
	n  int
}

func (s *Server) slow() {}

// handle unlocks once, early on success and through the deferred closure
// on failure: no leak. Silent.
func (s *Server) handle(fail bool) error {
	s.mu.Lock()
	unlocked := false
	unlock := func() {
		if !unlocked {
			unlocked = true
			s.mu.Unlock()
		}
	}
	defer func() { unlock() }()
	if fail {
		return errors.New("failed")
	}
	s.n++
	unlock()
	s.slow()
	return nil
}

// release keeps the unlock in a variable the watcher also sees: the call
// through the variable unlocks as the direct Unlock on the fast path
// does. Silent.
func (s *Server) release(done chan struct{}, fast bool) {
	s.mu.Lock()
	unlock := func() { s.mu.Unlock() }
	go func() {
		<-done
		_ = unlock
	}()
	if fast {
		s.mu.Unlock()
		return
	}
	s.n++
	unlock()
}

// forget never calls the unlock on the failure path.
func (s *Server) forget(fail bool) error {
	s.mu.Lock()
	unlock := func() { s.mu.Unlock() }
	defer func() { _ = unlock }()
	if fail {
		return errors.New("failed") // want `Server.mu taken at capturedcell.go:\d+ is still held on this return path`
	}
	unlock()
	return nil
}

var _ = []any{(*Server).handle, (*Server).release, (*Server).forget}
