// Project: influxdata/influxdb 0.9.3, files meta/store.go and meta/state.go
// (raftState / localRaft), with the continuous query service as the caller.
// Issue: influxdata/influxdb#3607 (startup deadlock between the continuous
// query service, the metastore loading its raft state and syncing node info),
// fixed by PR influxdata/influxdb#3857 "Fix deadlock in metastore".
//
// Store.IsLeader read-locks s.mu (line 109) and asks the current
// raftState whether this node leads. raftState is an interface whose local
// implementation, localRaft, keeps a back-pointer to the Store, and its
// isLeader read-locks r.store.mu again (line 73) - the same RWMutex,
// reached through the interface call and the back-pointer. When a writer
// (the raft FSM applying a command, e.g. the UpdateNode issued by
// syncNodeInfo) queues Lock() between the two read locks, the inner RLock
// waits for the writer and the writer waits for the outer RLock: the CQ
// service and the FSM are stuck, and with them the metastore. The fix drops
// the extra read lock from localRaft.isLeader (the public IsLeader already
// holds it).
package main

import (
	"fmt"
	"sync"
	"time"
)

// RaftState stands in for hashicorp/raft's node state.
type RaftState int

const (
	Follower RaftState = iota
	Candidate
	Leader
)

type raftNode struct{ state RaftState }

func (r *raftNode) State() RaftState { return r.state }

// Data is the metastore's replicated data.
type Data struct {
	Index uint64
	Nodes map[uint64]string
}

// raftState abstracts the interaction of the raft consensus layer across
// local or remote nodes (meta/state.go).
type raftState interface {
	open() error
	leader() string
	isLeader() bool
	apply(b []byte) error
}

// localRaft is a consensus strategy that uses a local raft implementation.
type localRaft struct {
	store *Store
	raft  *raftNode
}

func (r *localRaft) open() error {
	r.raft = &raftNode{state: Leader}
	return nil
}

func (r *localRaft) leader() string {
	if r.raft == nil {
		return ""
	}
	return r.store.Addr
}

func (r *localRaft) isLeader() bool {
	r.store.mu.RLock()
	defer r.store.mu.RUnlock()
	if r.raft == nil {
		return false
	}
	return r.raft.State() == Leader
}

// apply hands a command to raft; raft calls the FSM on its own goroutine.
func (r *localRaft) apply(b []byte) error {
	done := make(chan struct{})
	go func() {
		(*storeFSM)(r.store).Apply(b)
		close(done)
	}()
	<-done
	return nil
}

// Store represents a raft-backed metastore (meta/store.go).
type Store struct {
	mu        sync.RWMutex
	Addr      string
	id        uint64
	data      *Data
	raftState raftState
}

func NewStore(addr string) *Store {
	s := &Store{Addr: addr, data: &Data{Nodes: make(map[uint64]string)}}
	s.raftState = &localRaft{store: s}
	return s
}

// IsLeader returns true if the store is currently the leader.
func (s *Store) IsLeader() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.raftState == nil {
		return false
	}
	// Stand-in for scheduling delay between the two read locks.
	time.Sleep(100 * time.Millisecond)
	return s.raftState.isLeader()
}

// UpdateNode updates this node's host through raft (used by syncNodeInfo).
func (s *Store) UpdateNode(id uint64, host string) error {
	return s.raftState.apply([]byte(fmt.Sprintf("%d=%s", id, host)))
}

// storeFSM is the Store viewed as a raft FSM.
type storeFSM Store

func (fsm *storeFSM) Apply(b []byte) interface{} {
	s := (*Store)(fsm)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data.Index++
	s.data.Nodes[s.id] = string(b)
	return nil
}

// ---- services/continuous_querier ----

// MetaStore is the subset of the metastore the CQ service uses.
type MetaStore interface {
	IsLeader() bool
}

type Service struct {
	MetaStore MetaStore
}

// runContinuousQueries only runs CQs on the raft leader.
func (s *Service) runContinuousQueries() bool {
	if !s.MetaStore.IsLeader() {
		return false
	}
	return true
}

func main() {
	store := NewStore("10.0.0.1:8088")
	store.id = 1
	if err := store.raftState.open(); err != nil {
		fmt.Println(err)
		return
	}
	cq := &Service{MetaStore: store}

	ran := make(chan bool)
	go func() { ran <- cq.runContinuousQueries() }()

	// syncNodeInfo updates the node's hostname while the CQ check runs.
	synced := make(chan error)
	go func() {
		time.Sleep(50 * time.Millisecond)
		synced <- store.UpdateNode(store.id, "influx-1:8088")
	}()

	fmt.Println("cq ran:", <-ran)
	fmt.Println("node synced:", <-synced)
}
