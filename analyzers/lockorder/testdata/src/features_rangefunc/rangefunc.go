// Package features_rangefunc: range-over-func loops with a lock held; the
// iterator and the loop body run on the caller's goroutine.
package features_rangefunc

import (
	"iter"
	"sync"
)

type Set struct {
	mu    sync.Mutex
	items []string //confined:guardedby mu
}

// All iterates under the lock it takes itself.
func (s *Set) All() iter.Seq[string] {
	return func(yield func(string) bool) {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, it := range s.items {
			if !yield(it) {
				return
			}
		}
	}
}

// snapshot expects the caller to hold mu.
func (s *Set) snapshot() iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, it := range s.items { // want `read of Set.items without holding Set.mu \[guardedby\]`
			if !yield(it) {
				return
			}
		}
	}
}

func (s *Set) Count() (n int) {
	for range s.All() {
		n++ // silent
	}
	return n
}

func (s *Set) BodyRelocks() {
	s.mu.Lock()
	for it := range s.snapshot() {
		_ = it
		s.mu.Lock() // want `Set.mu locked again while held since rangefunc.go:\d+: self-deadlock \[double-lock\]`
		s.mu.Unlock()
	}
	s.mu.Unlock()
}

func (s *Set) BodyAppends(extra string) {
	for range s.All() {
	}
	s.mu.Lock()
	s.items = append(s.items, extra) // silent: held
	s.mu.Unlock()
}
