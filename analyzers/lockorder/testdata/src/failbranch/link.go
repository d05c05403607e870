package main

import "sync"

// A link builds its failure with an update the switch gives, through a
// func its config holds: the switch's own method. The switch asks the
// link under its lock; when the link's check fails (a branch that only
// returns the failure), the switch is locked again (lnd's getLocalLink
// and failAliasUpdate).
type LinkError struct{ msg string }

func (e *LinkError) Error() string { return e.msg }

type Link interface {
	Check(amt int) *LinkError
}

type linkConfig struct {
	FailUpdate func(id int) string
}

type channelLink struct {
	id      int
	balance int
	cfg     linkConfig
}

func (l *channelLink) Check(amt int) *LinkError {
	if amt > l.balance {
		upd := l.cfg.FailUpdate(l.id)
		return &LinkError{msg: "insufficient balance: " + upd}
	}
	return nil
}

type Switch struct {
	mu    sync.Mutex
	links map[int]Link
}

func (s *Switch) failUpdate(id int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.links[id]; ok {
		return "update"
	}
	return ""
}

func (s *Switch) Forward(id, amt int) *LinkError {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.links[id]
	if !ok {
		return &LinkError{msg: "unknown link"}
	}
	return l.Check(amt) // want `Switch.mu locked again by channelLink.Check -> Switch.failUpdate \(at link.go:42, on the path where Check fails\), the same lock: the program makes one Switch \(at link.go:\d+\), while held since link.go:51: self-deadlock \[double-lock\]`
}

// ForwardFixed looks the link up under the lock and asks it after. Silent.
func (s *Switch) ForwardFixed(id, amt int) *LinkError {
	s.mu.Lock()
	l, ok := s.links[id]
	s.mu.Unlock()
	if !ok {
		return &LinkError{msg: "unknown link"}
	}
	return l.Check(amt)
}

func newSwitch() *Switch {
	s := &Switch{links: map[int]Link{}}
	s.links[1] = &channelLink{id: 1, cfg: linkConfig{FailUpdate: s.failUpdate}}
	return s
}

func init() {
	s := newSwitch()
	s.Forward(1, 10)
	s.ForwardFixed(1, 10)
}
