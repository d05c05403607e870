package tryacquire

import "sync"

// A method returning a TryLock's result locks exactly when it returns
// true, declared (as gVisor's Endpoint.TryLock) or not.
type Endpoint struct {
	mu sync.Mutex
	n  int //confined:guardedby mu
}

// +checklocksacquire:e.mu
func (e *Endpoint) TryLock() bool {
	return e.mu.TryLock()
}

type session struct {
	mu sync.Mutex
	n  int
}

func (s *session) tryLock() bool { return s.mu.TryLock() }

func handle(e *Endpoint) {
	if !e.TryLock() {
		return // not held here: no leak
	}
	e.n++
	e.mu.Unlock()
}

func spin(e *Endpoint) {
	if !e.TryLock() {
		e.mu.Lock() // the failure branch: not a double lock
	}
	e.n++
	e.mu.Unlock()
}

func twice(e *Endpoint) {
	if e.TryLock() {
		e.mu.Lock() // want `Endpoint.mu locked again while held since wrapper.go:\d+: self-deadlock \[double-lock\]`
		e.mu.Unlock()
		e.mu.Unlock()
	}
}

func (s *session) poll() {
	if s.tryLock() {
		s.n++
		s.mu.Unlock()
	}
}

func (s *session) pollTwice() {
	if s.tryLock() {
		s.mu.Lock() // want `session.mu locked again while held since wrapper.go:\d+: self-deadlock \[double-lock\]`
		s.mu.Unlock()
		s.mu.Unlock()
	}
}
