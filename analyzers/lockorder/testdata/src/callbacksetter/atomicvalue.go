package callbacksetter

import (
	"sync"
	"sync/atomic"
)

// A callback kept in an atomic.Value (Store by a setter, Load and a type
// assertion at the call) is followed as one kept in a field: a server's
// topology callback, called under its subscription lock, whose only
// value asks the server for its state.
type UpdateFunc func(s *Member, desc string) string

type Member struct {
	subLock  sync.Mutex
	desc     string
	updateCB atomic.Value
}

func (s *Member) setUpdateCallback(cb UpdateFunc) { s.updateCB.Store(cb) }

func (s *Member) Desc() string {
	s.subLock.Lock()
	defer s.subLock.Unlock()
	return s.desc
}

func (s *Member) update(desc string) {
	s.subLock.Lock()
	defer s.subLock.Unlock()
	if cb, ok := s.updateCB.Load().(UpdateFunc); ok && cb != nil {
		desc = cb(s, desc) // want `Member.subLock locked again by watch.func1 -> Member.Desc \(at atomicvalue.go:23\) while held since atomicvalue.go:29: self-deadlock \[double-lock\]`
	}
	s.desc = desc
}

func watch(s *Member) {
	s.setUpdateCallback(func(x *Member, d string) string { return x.Desc() + d })
}

// Correct: the callback runs after the unlock.
type Replica struct {
	mu       sync.Mutex
	state    string
	onChange atomic.Value
}

func (r *Replica) State() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state
}

func (r *Replica) set(state string) {
	r.mu.Lock()
	r.state = state
	r.mu.Unlock()
	if cb, ok := r.onChange.Load().(func(*Replica)); ok {
		cb(r)
	}
}

func follow(r *Replica) {
	r.onChange.Store(func(x *Replica) { println(x.State()) })
}
