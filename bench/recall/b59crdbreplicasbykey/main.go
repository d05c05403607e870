// Project: cockroachdb/cockroach
// Version: master during the 23.1 cycle (February 2023), after PR #96870
// Files/functions: pkg/kv/kvserver/store_create_replica.go:
// Store.addToReplicasByKeyLocked, addToReplicasByKeyLockedReplicaRLocked;
// store.go: Store.getOverlappingKeyRangeLocked; store_replica_btree.go:
// storeReplicaBTree.VisitKeyRange, mustDescendLessOrEqual,
// replicaOrPlaceholder.Desc; replica.go: Replica.Desc, setDescRaftMuLocked.
// Issue: cockroachdb/cockroach #96931, fixed by PR #97381 "kvserver: prevent
// recursive Replica.mu.RLock" (regression from PR #96870).
//
// addToReplicasByKeyLockedReplicaRLocked inserts an initialized replica into
// the Store's replicasByKey btree and requires Replica.mu to be read-locked
// (addToReplicasByKeyLocked takes that RLock). It first checks for overlaps
// via getOverlappingKeyRangeLocked -> VisitKeyRange, which aligns the start
// key by calling Desc() on the item at or before it; for a Replica item that
// is Replica.Desc, taking Replica.mu.RLock. When the replica intersects
// itself (tests re-insert a replica already in the btree) this is a second
// RLock of the same mutex. If the raft goroutine calls setDescRaftMuLocked
// (Replica.mu.Lock) in between, the writer waits for the first RLock and the
// recursive RLock waits behind the writer.
// The fix moves locking to the caller: addToReplicasByKeyLocked takes the
// descriptor as an argument, read under a short RLock released beforehand.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type RWMutex struct{ sync.RWMutex }

func (m *RWMutex) AssertRHeld() {}

type RKey string

type RangeDescriptor struct {
	RangeID          int64
	StartKey, EndKey RKey
}

func (d *RangeDescriptor) IsInitialized() bool { return d.EndKey != "" }

type Replica struct {
	RangeID  int64
	startKey RKey
	mu       struct {
		RWMutex
		state struct{ Desc *RangeDescriptor }
	}
}

func (r *Replica) Desc() *RangeDescriptor {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.mu.state.Desc
}

func (r *Replica) descRLocked() *RangeDescriptor {
	r.mu.AssertRHeld()
	return r.mu.state.Desc
}

func (r *Replica) setDescRaftMuLocked(desc *RangeDescriptor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.state.Desc = desc
}

type ReplicaPlaceholder struct{ rangeDesc RangeDescriptor }

func (r *ReplicaPlaceholder) Desc() *RangeDescriptor { return &r.rangeDesc }

type replicaOrPlaceholder struct {
	item interface{}
	repl *Replica
	ph   *ReplicaPlaceholder
}

func (it *replicaOrPlaceholder) Desc() *RangeDescriptor {
	if it.repl != nil {
		return it.repl.Desc()
	}
	return it.ph.Desc()
}

func (it *replicaOrPlaceholder) key() RKey {
	if it.repl != nil {
		return it.repl.startKey
	}
	return it.ph.rangeDesc.StartKey
}

type storeReplicaBTree struct{ items []replicaOrPlaceholder }

func (b *storeReplicaBTree) mustDescendLessOrEqual(key RKey) replicaOrPlaceholder {
	var res replicaOrPlaceholder
	for _, it := range b.items {
		if key < it.key() {
			break
		}
		res = it
	}
	return res
}

var errStopIteration = errors.New("stop iteration")

func (b *storeReplicaBTree) VisitKeyRange(startKey, endKey RKey, visitor func(replicaOrPlaceholder) error) error {
	// Align startKey on a range boundary.
	if it := b.mustDescendLessOrEqual(startKey); it.item != nil {
		if desc := it.Desc(); startKey < desc.EndKey {
			startKey = desc.StartKey
		}
	}
	for _, it := range b.items {
		if it.key() < startKey || it.key() >= endKey {
			continue
		}
		if err := visitor(it); err == errStopIteration {
			return nil
		} else if err != nil {
			return err
		}
	}
	return nil
}

func (b *storeReplicaBTree) ReplaceOrInsertReplica(repl *Replica) {
	b.items = append(b.items, replicaOrPlaceholder{item: repl, repl: repl}) // kept sorted by key
}

type Store struct {
	mu struct {
		RWMutex
		replicasByKey     *storeReplicaBTree
		replicasByRangeID map[int64]*Replica
	}
}

func (s *Store) GetReplicaIfExists(id int64) *Replica { return s.mu.replicasByRangeID[id] }

func (s *Store) getOverlappingKeyRangeLocked(rngDesc *RangeDescriptor) replicaOrPlaceholder {
	var it replicaOrPlaceholder
	if err := s.mu.replicasByKey.VisitKeyRange(rngDesc.StartKey, rngDesc.EndKey,
		func(iit replicaOrPlaceholder) error {
			it = iit
			return errStopIteration
		}); err != nil {
		panic(err)
	}
	return it
}

func (s *Store) addToReplicasByKeyLockedReplicaRLocked(repl *Replica) error {
	desc := repl.descRLocked()
	if !desc.IsInitialized() {
		return fmt.Errorf("attempted to add uninitialized replica r%d", repl.RangeID)
	}
	if got := s.GetReplicaIfExists(desc.RangeID); got != repl {
		return fmt.Errorf("replica r%d not in replicasByRangeID", repl.RangeID)
	}
	time.Sleep(50 * time.Millisecond) // raft updates the descriptor meanwhile
	if it := s.getOverlappingKeyRangeLocked(desc); it.item != nil {
		return fmt.Errorf("cannot add to replicasByKey: range r%d overlaps with %v", repl.RangeID, it.key())
	}
	s.mu.replicasByKey.ReplaceOrInsertReplica(repl)
	return nil
}

func (s *Store) addToReplicasByKeyLocked(repl *Replica) error {
	repl.mu.RLock()
	defer repl.mu.RUnlock()
	return s.addToReplicasByKeyLockedReplicaRLocked(repl)
}

func main() {
	repl := &Replica{RangeID: 1, startKey: "a"}
	repl.mu.state.Desc = &RangeDescriptor{RangeID: 1, StartKey: "a", EndKey: "m"}
	s := &Store{}
	s.mu.replicasByKey = &storeReplicaBTree{}
	s.mu.replicasByRangeID = map[int64]*Replica{1: repl}
	s.mu.replicasByKey.ReplaceOrInsertReplica(repl) // inserted on initialization

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // test re-inserting the replica, expecting an overlap error
		defer wg.Done()
		s.mu.Lock()
		defer s.mu.Unlock()
		fmt.Println(s.addToReplicasByKeyLocked(repl))
	}()
	go func() { // raft ready handling applies a descriptor update
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		repl.setDescRaftMuLocked(&RangeDescriptor{RangeID: 1, StartKey: "a", EndKey: "m"})
	}()
	wg.Wait()
}
