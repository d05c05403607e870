// Package checklocks_excludes: a call that breaks the callee's excludes
// and deadlocks on the lock the callee takes is one problem: one finding.
package checklocks_excludes

import "sync"

type svc struct {
	mu sync.Mutex
	// +checklocks:mu
	n int
}

// +checklocksexclude:s.mu
func (s *svc) bump() {
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
}

// +checklocksexclude:s.mu
func (s *svc) quiet() {}

func (s *svc) bad() {
	s.mu.Lock()
	s.bump()  // want `call to svc.bump while holding svc.mu \(taken at excludes.go:\d+\): it must not be held \[excludes\]`
	s.quiet() // want `call to svc.quiet while holding svc.mu \(taken at excludes.go:\d+\): it must not be held \[excludes\]`
	s.mu.Unlock()
}

func (s *svc) good() {
	s.bump()
	s.quiet()
}
