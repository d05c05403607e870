// Project: cockroach (pkg/kv/kvserver: store.go, replica_raft.go, store_remove_replica.go).
//
// Bug (approximate): lock-order inversion between Store.mu and Replica.mu. The
// documented order is Store.mu before Replica.mu. Store.removeReplicaImpl (replica
// GC) holds Store.mu and then takes Replica.mu to mark the replica destroyed,
// while the raft scheduler worker, inside Replica.handleRaftReady with Replica.mu
// held, unquiesced the replica and called back into the store
// (Store.setReplicaUnquiesced), which takes Store.mu.
// Fix: handleRaftReady records what to tell the store while holding Replica.mu,
// releases it, and only then calls into the Store.
package cockroachstore

import (
	"errors"
	"sync"
	"testing"
	"time"
)

type RangeID int64

type raftEntry struct {
	Index uint64
	Data  []byte
}

type Replica struct {
	RangeID RangeID
	store   *Store

	mu struct {
		sync.Mutex
		destroyed    error
		quiescent    bool
		appliedIndex uint64
		pending      []raftEntry
	}
}

type Store struct {
	mu struct {
		sync.Mutex
		replicas           map[RangeID]*Replica
		unquiescedReplicas map[RangeID]struct{}
	}
}

var errRemoved = errors.New("replica removed")

func NewStore() *Store {
	s := &Store{}
	s.mu.replicas = map[RangeID]*Replica{}
	s.mu.unquiescedReplicas = map[RangeID]struct{}{}
	return s
}

func (s *Store) addReplica(id RangeID) *Replica {
	r := &Replica{RangeID: id, store: s}
	r.mu.quiescent = true
	s.mu.Lock()
	s.mu.replicas[id] = r
	s.mu.Unlock()
	return r
}

// setReplicaUnquiesced is called by replicas when they wake up.
func (s *Store) setReplicaUnquiesced(id RangeID) {
	s.mu.Lock() // DEADLOCK HERE (raft worker holds Replica.mu, wants Store.mu)
	defer s.mu.Unlock()
	s.mu.unquiescedReplicas[id] = struct{}{}
}

// removeReplicaImpl is called by the replica GC queue.
func (s *Store) removeReplicaImpl(rep *Replica) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.mu.replicas[rep.RangeID]; !ok {
		return errors.New("replica not found")
	}
	clearRangeData(rep.RangeID)
	rep.setDestroyed(errRemoved)
	delete(s.mu.replicas, rep.RangeID)
	delete(s.mu.unquiescedReplicas, rep.RangeID)
	return nil
}

func clearRangeData(RangeID) { time.Sleep(20 * time.Millisecond) } // ClearRange on the engine

func (r *Replica) setDestroyed(err error) {
	r.mu.Lock() // DEADLOCK HERE (GC queue holds Store.mu, wants Replica.mu)
	defer r.mu.Unlock()
	r.mu.destroyed = err
}

// handleRaftReady is run by a raft scheduler worker.
func (r *Replica) handleRaftReady() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.destroyed != nil {
		return r.mu.destroyed
	}
	r.applyCommittedEntriesLocked()
	if r.mu.quiescent {
		r.unquiesceLocked()
	}
	return nil
}

func (r *Replica) applyCommittedEntriesLocked() {
	time.Sleep(20 * time.Millisecond) // apply batch to the state machine
	for _, e := range r.mu.pending {
		r.mu.appliedIndex = e.Index
	}
	r.mu.pending = nil
}

// unquiesceLocked requires r.mu to be held.
func (r *Replica) unquiesceLocked() {
	r.mu.quiescent = false
	r.store.setReplicaUnquiesced(r.RangeID)
}

func TestRemoveReplicaRacesWithRaftReady(t *testing.T) {
	s := NewStore()
	r := s.addReplica(7)
	r.mu.pending = []raftEntry{{Index: 11}, {Index: 12}}

	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Add(2)
	go func() { // raft scheduler worker
		defer wg.Done()
		errs[0] = r.handleRaftReady()
	}()
	go func() { // replicaGCQueue.process
		defer wg.Done()
		errs[1] = s.removeReplicaImpl(r)
	}()
	wg.Wait()
	t.Logf("handleRaftReady: %v, removeReplica: %v", errs[0], errs[1])
}
