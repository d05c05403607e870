// Project: cockroach (pkg/storage, Store / Replica).
// Bug (approximate, from memory): the documented lock order is
// Replica.raftMu < Store.mu < Replica.mu, but Replica.setDesc() held
// Replica.mu while calling back into the Store to update the replicas-by-key
// index (Store.mu). Concurrently Store.removeReplicaImpl() holds Store.mu
// and reads the replica's descriptor (Replica.mu). One of several such
// Store.mu/Replica.mu inversions fixed in the 1.x timeframe; issue number
// not remembered (approximate). The fix updates the replica state under
// Replica.mu, drops it, then calls into the Store.
package cockroach_replica

import (
	"sync"
	"testing"
	"time"
)

type RangeID int64

type RangeDescriptor struct {
	RangeID  RangeID
	StartKey string
	EndKey   string
}

type ReplicaState struct {
	Desc *RangeDescriptor
}

// replicaKeyIndex is the btree of replicas keyed by EndKey, trimmed.
type replicaKeyIndex interface {
	updateReplicaKeyRange(r *Replica, desc *RangeDescriptor)
}

type Replica struct {
	RangeID RangeID
	store   replicaKeyIndex

	raftMu sync.Mutex

	mu struct {
		sync.RWMutex
		state     ReplicaState
		destroyed error
	}
}

// Desc returns the authoritative range descriptor, acquiring a replica lock
// in the process.
func (r *Replica) Desc() *RangeDescriptor {
	r.mu.RLock() // DEADLOCK HERE
	defer r.mu.RUnlock()
	return r.mu.state.Desc
}

// setDesc atomically sets the replica's descriptor. Requires raftMu.
func (r *Replica) setDesc(desc *RangeDescriptor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.state.Desc = desc
	time.Sleep(50 * time.Millisecond) // computing stats, widens the window
	r.store.updateReplicaKeyRange(r, desc)
}

type Store struct {
	mu struct {
		sync.RWMutex
		replicas      map[RangeID]*Replica
		replicasByKey map[string]*Replica
	}
}

func NewStore() *Store {
	s := &Store{}
	s.mu.replicas = make(map[RangeID]*Replica)
	s.mu.replicasByKey = make(map[string]*Replica)
	return s
}

func (s *Store) addReplicaInternalLocked(r *Replica) {
	s.mu.replicas[r.RangeID] = r
	s.mu.replicasByKey[r.mu.state.Desc.EndKey] = r
}

func (s *Store) updateReplicaKeyRange(r *Replica, desc *RangeDescriptor) {
	s.mu.Lock() // DEADLOCK HERE
	defer s.mu.Unlock()
	for k, rep := range s.mu.replicasByKey {
		if rep == r {
			delete(s.mu.replicasByKey, k)
		}
	}
	s.mu.replicasByKey[desc.EndKey] = r
}

// removeReplicaImpl removes the replica from the store's maps.
func (s *Store) removeReplicaImpl(rep *Replica) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.mu.replicas, rep.RangeID)
	time.Sleep(50 * time.Millisecond) // clearing range data, widens the window
	desc := rep.Desc()
	delete(s.mu.replicasByKey, desc.EndKey)
	return nil
}

func TestSplitVsRemoveReplica(t *testing.T) {
	s := NewStore()
	r := &Replica{RangeID: 1, store: s}
	r.mu.state.Desc = &RangeDescriptor{RangeID: 1, StartKey: "a", EndKey: "z"}
	s.mu.Lock()
	s.addReplicaInternalLocked(r)
	s.mu.Unlock()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		r.raftMu.Lock()
		defer r.raftMu.Unlock()
		r.setDesc(&RangeDescriptor{RangeID: 1, StartKey: "a", EndKey: "m"})
	}()
	go func() {
		defer wg.Done()
		_ = s.removeReplicaImpl(r)
	}()
	wg.Wait()
}
