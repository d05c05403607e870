// Package deferred: a closure deferred after the deferred unlock runs
// before it, with the lock held; one deferred before the unlock, or
// after an explicit unlock, runs without it. A local value built with a
// composite literal is not shared: its fields are no evidence.
package deferred

import "sync"

type State struct {
	mu      sync.Mutex
	current int // want `State.current: add //confined:guardedby mu \(rank \d of \d\): mu is held at 4 of 5 accesses; 1 deviant: s.current read in State.SetLate.func1 \(deferred.go:\d+\)`
}

func (s *State) Get() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current
}

// Set reports the state from a closure deferred after the unlock: it runs
// first, with mu held.
func (s *State) Set(v int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() { report(s.current) }()
	s.current = v
}

// SetLate defers the closure before the unlock: it runs after it, without
// mu: the deviant.
func (s *State) SetLate(v int) {
	defer func() { report(s.current) }()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.current = v
}

func report(int) {}

// Value is returned by value: NewValue's literal and its writes are local.
type Value struct {
	mu    sync.Mutex
	count int // want `Value.count: add //confined:guardedby mu \(rank \d of \d\): mu is held at 2 of 2 accesses`
}

func NewValue(n int) Value {
	v := Value{count: n}
	v.count++
	return v
}

func (v *Value) Add() {
	v.mu.Lock()
	v.count++
	v.mu.Unlock()
}

func (v *Value) Count() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.count
}
