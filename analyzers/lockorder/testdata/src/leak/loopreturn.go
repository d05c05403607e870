package leak

import (
	"errors"
	"sync"
)

// A loop body that takes the lock and unlocks it before going round, but
// returns from the middle of the body on a failure, leaves the lock held
// (thrift's AcceptLoop returning the accept error with p.mu held; the
// server's Stop then blocks for good). No return of the function passes
// the unlock, so no other return path says the lock is meant to be let
// go: the loop's own unlock does.

type acceptServer struct {
	mu       sync.Mutex
	accepted []int
	next     int
}

var errTooManyFiles = errors.New("too many open files")

func (s *acceptServer) accept() (int, error) {
	s.next++
	if s.next > 8 {
		return 0, errTooManyFiles
	}
	return s.next, nil
}

func (s *acceptServer) acceptLoop() error {
	for {
		c, err := s.accept()
		s.mu.Lock()
		if err != nil {
			return err // want `acceptServer.mu taken at loopreturn.go:\d+ is still held on this return path \(other paths release it\) \[lock-leak\]`
		}
		s.accepted = append(s.accepted, c)
		s.mu.Unlock()
	}
}

// The fix: the body in a function of its own, its unlock deferred. Silent.
func (s *acceptServer) acceptOne() error {
	c, err := s.accept()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		return err
	}
	s.accepted = append(s.accepted, c)
	return nil
}

// A spin that returns holding the lock once the state is ready acquires
// it on success: the caller unlocks. Silent.
func (s *acceptServer) lockWhenReady() error {
	for {
		s.mu.Lock()
		if len(s.accepted) > 0 {
			return nil
		}
		s.mu.Unlock()
		if _, err := s.accept(); err != nil {
			return err
		}
	}
}
