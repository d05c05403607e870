// Package raft is a cut-down hashicorp/raft observer registry.
package raft

import "sync"

// Observation is delivered to observers on leadership changes.
type Observation struct {
	Term   uint64
	Leader string
}

// Observer receives observations on a channel.
type Observer struct {
	id       uint64
	ch       chan Observation
	blocking bool
}

// NewObserver creates an observer; blocking observers are never skipped.
func NewObserver(ch chan Observation, blocking bool) *Observer {
	return &Observer{ch: ch, blocking: blocking}
}

type Raft struct {
	observersLock sync.RWMutex
	observers     map[uint64]*Observer
	nextID        uint64
	term          uint64
}

func New() *Raft {
	return &Raft{observers: make(map[uint64]*Observer)}
}

func (r *Raft) RegisterObserver(o *Observer) {
	r.observersLock.Lock()
	defer r.observersLock.Unlock()
	r.nextID++
	o.id = r.nextID
	r.observers[o.id] = o
}

func (r *Raft) DeregisterObserver(o *Observer) {
	r.observersLock.Lock()
	defer r.observersLock.Unlock()
	delete(r.observers, o.id)
}

func (r *Raft) observe(o Observation) {
	r.observersLock.RLock()
	defer r.observersLock.RUnlock()
	for _, or := range r.observers {
		if or.blocking {
			or.ch <- o
			continue
		}
		select {
		case or.ch <- o:
		default:
		}
	}
}

// Run simulates n leadership changes.
func (r *Raft) Run(n int) {
	for i := 0; i < n; i++ {
		r.term++
		r.observe(Observation{Term: r.term, Leader: "node1"})
	}
}
