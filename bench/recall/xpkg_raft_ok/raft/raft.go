// Package raft is a toy consensus core modeled on hashicorp/raft.
package raft

import "sync"

// Observation describes a leadership change.
type Observation struct {
	Term   uint64
	Leader string
}

// Observer receives observations; it is called with Raft.mu held.
type Observer interface {
	Observe(o Observation)
}

// Raft holds the current term and leader.
type Raft struct {
	mu        sync.Mutex
	term      uint64
	leader    string
	observers []Observer
}

// RegisterObserver adds o.
func (r *Raft) RegisterObserver(o Observer) {
	r.mu.Lock()
	r.observers = append(r.observers, o)
	r.mu.Unlock()
}

// SetLeader bumps the term and notifies observers under the lock.
func (r *Raft) SetLeader(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.term++
	r.leader = name
	for _, o := range r.observers {
		o.Observe(Observation{Term: r.term, Leader: name})
	}
}

// Leader returns the current leader and term.
func (r *Raft) Leader() (string, uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.leader, r.term
}
