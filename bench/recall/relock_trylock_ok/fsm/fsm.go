// Package fsm is a small state machine that notifies an Observer while
// holding its mutex. Snapshot and TrySnapshot let observers read history.
package fsm

import "sync"

// Observer is implemented by importers; it receives the machine itself.
type Observer interface {
	Notify(m *Machine, from, to string)
}

// Machine holds the current state and a transition log.
type Machine struct {
	mu      sync.Mutex
	state   string
	history []string
	obs     Observer
}

// New creates a Machine in state initial reporting to obs.
func New(initial string, obs Observer) *Machine {
	return &Machine{state: initial, obs: obs}
}

// Transition moves to next and notifies the observer with mu held.
func (m *Machine) Transition(next string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	from := m.state
	m.state = next
	m.history = append(m.history, from+"->"+next)
	if m.obs != nil {
		m.obs.Notify(m, from, next) // under mu
	}
}

// TrySnapshot returns the history if mu is free; otherwise it gives up
// immediately and reports ok=false. Safe to call from Notify.
func (m *Machine) TrySnapshot() (hist []string, ok bool) {
	if !m.mu.TryLock() {
		return nil, false
	}
	defer m.mu.Unlock()
	return append([]string(nil), m.history...), true
}
