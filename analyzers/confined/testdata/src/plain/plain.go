// Package plain has no annotations: confined must be silent and must not
// panic on generics, method values, closures in loops, defer/recover,
// select and range-over-func.
package plain

import (
	"errors"
	"iter"
	"sync"
	"time"
)

type Set[T comparable] struct {
	mu sync.Mutex
	m  map[T]bool
}

func (s *Set[T]) Add(v T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[T]bool{}
	}
	s.m[v] = true
}

func (s *Set[T]) All() iter.Seq[T] {
	return func(yield func(T) bool) {
		for v := range s.m {
			if !yield(v) {
				return
			}
		}
	}
}

func Use() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("recovered")
		}
	}()
	var s Set[int]
	add := s.Add
	for i := range 3 {
		go func() { add(i) }()
	}
	for v := range s.All() {
		_ = v
	}
	done := make(chan struct{})
	time.AfterFunc(time.Millisecond, func() { close(done) })
	select {
	case <-done:
	case <-time.After(time.Second):
	}
	return nil
}

type Counter struct{ n int }

func (c *Counter) Inc() { c.n++ }

func Loop(cs []*Counter) {
	var fs []func()
	for _, c := range cs {
		fs = append(fs, c.Inc)
	}
	for _, f := range fs {
		go f()
	}
}
