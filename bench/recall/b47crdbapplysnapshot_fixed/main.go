// Project: cockroachdb/cockroach, master during the 21.1 cycle (February 2021).
// Files: pkg/kv/kvserver/replica_raftstorage.go (Replica.applySnapshot),
// pkg/kv/kvserver/store.go (Store.LookupReplica,
// Store.maybeMarkReplicaInitializedLockedReplLocked,
// Store.removePlaceholderLocked), pkg/kv/kvserver/store_replica_btree.go
// (storeReplicaBTree.LookupReplica), pkg/kv/kvserver/replica.go (Replica.Desc).
// Issue: cockroachdb/cockroach#60479; fixed by PR #60504 "kv: fix lock
// ordering in Replica.applySnapshot" (regression from PR #59423, which made
// the store/replica critical section of applySnapshot a combined one).
//
// The documented lock order is Store.mu before Replica.mu. PR #59423 wrapped
// the placeholder swap, the descriptor update and the replica-state update in
// one critical section but took the locks the other way round: applySnapshot
// locked r.mu and then r.store.mu. Any request routed through the store does
// the opposite: Store.LookupReplica read-locks Store.mu and walks the
// replicasByKey btree; once it has found the candidate it checks the key
// against repl.Desc(), and Desc read-locks the replica's mu. With a snapshot
// being applied to that replica at the same time, the raft goroutine holds
// r.mu and waits for Store.mu while the request goroutine holds Store.mu
// (read) and waits for r.mu; every later request on the store then queues
// behind the pending Store.mu writer. The fix locks Store.mu first and
// Replica.mu second in applySnapshot.
//
// This is the fixed version.
package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
)

type RangeID int64
type RKey string

type RangeDescriptor struct {
	RangeID          RangeID
	StartKey, EndKey RKey
}

func (d *RangeDescriptor) ContainsKey(k RKey) bool { return d.StartKey <= k && k < d.EndKey }

type ReplicaState struct {
	Desc             *RangeDescriptor
	RaftAppliedIndex uint64
}

type Replica struct {
	RangeID  RangeID
	store    *Store
	startKey RKey // copy of Desc().StartKey kept for the btree, set under Store.mu
	raftMu   sync.Mutex
	mu       struct {
		sync.RWMutex
		state ReplicaState
	}
}

// Desc returns the authoritative range descriptor, acquiring a replica lock in
// the process.
func (r *Replica) Desc() *RangeDescriptor {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.mu.state.Desc
}

func (r *Replica) setDescLockedRaftMuLocked(_ context.Context, desc *RangeDescriptor) {
	r.mu.state.Desc = desc
}

type IncomingSnapshot struct {
	State       *ReplicaState
	placeholder RangeID
}

// storeReplicaBTree is the replicasByKey index, ordered by start key.
type storeReplicaBTree struct{ items []*Replica }

func (b *storeReplicaBTree) ReplaceOrInsertReplica(_ context.Context, repl *Replica) {
	b.items = append(b.items, repl)
	sort.Slice(b.items, func(i, j int) bool { return b.items[i].startKey < b.items[j].startKey })
}

func (b *storeReplicaBTree) mustDescendLessOrEqual(key RKey, fn func(*Replica) bool) {
	for i := len(b.items) - 1; i >= 0; i-- {
		time.Sleep(100 * time.Millisecond) // a large tree on a busy node
		if b.items[i].startKey <= key && !fn(b.items[i]) {
			return
		}
	}
}

func (b *storeReplicaBTree) LookupReplica(_ context.Context, key RKey) *Replica {
	var repl *Replica
	b.mustDescendLessOrEqual(key, func(it *Replica) bool {
		repl = it
		return false // the first item seen is the only candidate
	})
	if repl == nil || !repl.Desc().ContainsKey(key) {
		return nil
	}
	return repl
}

type Store struct {
	mu struct {
		sync.RWMutex
		replicasByKey       *storeReplicaBTree
		uninitReplicas      map[RangeID]*Replica
		replicaPlaceholders map[RangeID]struct{}
	}
}

func (s *Store) LookupReplica(key RKey) *Replica {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.mu.replicasByKey.LookupReplica(context.Background(), key)
}

func (s *Store) removePlaceholderLocked(_ context.Context, id RangeID) bool {
	_, ok := s.mu.replicaPlaceholders[id]
	delete(s.mu.replicaPlaceholders, id)
	return ok
}

func (s *Store) maybeMarkReplicaInitializedLockedReplLocked(ctx context.Context, lockedRepl *Replica) error {
	delete(s.mu.uninitReplicas, lockedRepl.RangeID)
	lockedRepl.startKey = lockedRepl.mu.state.Desc.StartKey
	s.mu.replicasByKey.ReplaceOrInsertReplica(ctx, lockedRepl)
	return nil
}

// applySnapshot is called with raftMu held by the raft scheduler.
func (r *Replica) applySnapshot(ctx context.Context, inSnap IncomingSnapshot) error {
	s := inSnap.State
	// ... SSTs have been ingested into the engine at this point ...

	// Atomically swap the placeholder for the replica and update the replica's
	// state, in one critical section.
	r.store.mu.Lock()
	r.mu.Lock()
	r.store.removePlaceholderLocked(ctx, inSnap.placeholder)
	r.setDescLockedRaftMuLocked(ctx, s.Desc)
	if err := r.store.maybeMarkReplicaInitializedLockedReplLocked(ctx, r); err != nil {
		panic(err)
	}
	r.mu.state = *s
	r.mu.Unlock()
	r.store.mu.Unlock()
	return nil
}

func (s *Store) processRaftSnapshotRequest(ctx context.Context, r *Replica, snap IncomingSnapshot) error {
	r.raftMu.Lock()
	defer r.raftMu.Unlock()
	return r.applySnapshot(ctx, snap)
}

func main() {
	s := &Store{}
	s.mu.replicasByKey = &storeReplicaBTree{}
	s.mu.uninitReplicas = map[RangeID]*Replica{}
	s.mu.replicaPlaceholders = map[RangeID]struct{}{7: {}}

	r6 := &Replica{RangeID: 6, store: s, startKey: "a"}
	r6.mu.state.Desc = &RangeDescriptor{RangeID: 6, StartKey: "a", EndKey: "m"}
	s.mu.replicasByKey.ReplaceOrInsertReplica(context.Background(), r6)
	r7 := &Replica{RangeID: 7, store: s, startKey: "m"}
	r7.mu.state.Desc = &RangeDescriptor{RangeID: 7, StartKey: "m", EndKey: "z"}
	s.mu.replicasByKey.ReplaceOrInsertReplica(context.Background(), r7)
	s.mu.uninitReplicas[7] = r7

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // a BatchRequest being routed by Store.Send
		defer wg.Done()
		if repl := s.LookupReplica("q"); repl != nil {
			fmt.Println("routed to r", repl.RangeID)
		}
	}()
	go func() { // the raft scheduler applying an incoming snapshot for r7
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		snap := IncomingSnapshot{State: &ReplicaState{Desc: &RangeDescriptor{RangeID: 7, StartKey: "m", EndKey: "z"}, RaftAppliedIndex: 42}, placeholder: 7}
		if err := s.processRaftSnapshotRequest(context.Background(), r7, snap); err == nil {
			fmt.Println("snapshot applied")
		}
	}()
	wg.Wait()
}
