// Project: cockroachdb/cockroach v19.1, files pkg/storage/queue.go
// (baseQueue.maybeAdd / Add), pkg/storage/scanner.go (replicaScanner),
// pkg/storage/replica_raft.go (Replica.maybeInitializeRaftGroup),
// pkg/storage/store_snapshot.go (Store.canApplySnapshotLocked) and
// pkg/storage/replica_raftstorage.go (Replica.applySnapshot).
// Issue: cockroachdb/cockroach#36413 "storage: deadlocks due to invalid lock
// ordering", fixed by PR cockroachdb/cockroach#36415 "storage: fix deadlock
// due to inconsistent lock ordering" (backport #36542).
//
// There was no lock order for baseQueue.mu. Three goroutines form a cycle:
// processRaftSnapshotRequest holds Replica.raftMu (withReplicaForRequest)
// and applySnapshot then wants Store.mu (line 81). canApplySnapshot
// holds Store.mu and canApplySnapshotLocked hands the overlapping replica to
// replicaGCQueue.Add, which wants baseQueue.mu (line 113). The replica
// scanner calls MaybeAdd through the replicaQueue interface; maybeAdd holds
// baseQueue.mu for its whole body and calls repl.maybeInitializeRaftGroup,
// which wants the replica's raftMu (line 71) - violating
// raftMu < Store.mu and closing the cycle raftMu -> Store.mu -> baseQueue.mu
// -> raftMu. The fix reads stopped/disabled under a short baseQueue.mu
// critical section and calls maybeInitializeRaftGroup without baseQueue.mu
// held, re-acquiring it only to add the replica.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type RangeID int64

type RangeDescriptor struct {
	RangeID          RangeID
	StartKey, EndKey string
}

type rawNode struct{}

// Replica is a replica of a range on a store (replica.go).
type Replica struct {
	RangeID RangeID
	store   *Store
	// raftMu protects Raft processing; lock ordering: raftMu < Store.mu < Replica.mu.
	raftMu sync.Mutex
	mu     struct {
		sync.RWMutex
		desc              *RangeDescriptor
		internalRaftGroup *rawNode
	}
}

func (r *Replica) Desc() *RangeDescriptor {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.mu.desc
}

func (r *Replica) IsInitialized() bool { return r.Desc() != nil }

// maybeInitializeRaftGroup checks whether the internal Raft group has not yet
// been initialized; if not, it creates it (lazy loading of Raft groups).
func (r *Replica) maybeInitializeRaftGroup(ctx context.Context) {
	r.mu.RLock()
	initialized := r.mu.internalRaftGroup != nil
	r.mu.RUnlock()
	if initialized {
		return
	}
	// Acquire raftMu, but need to maintain lock ordering (raftMu then mu).
	r.raftMu.Lock()
	defer r.raftMu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.internalRaftGroup = &rawNode{}
}

// applySnapshot is called with raftMu held.
func (r *Replica) applySnapshot(ctx context.Context, desc RangeDescriptor) error {
	time.Sleep(100 * time.Millisecond) // writing the snapshot's batch
	r.store.mu.Lock()
	r.mu.Lock()
	r.mu.desc = &desc
	r.mu.Unlock()
	r.store.mu.Unlock()
	return nil
}

type queueImpl interface {
	shouldQueue(ctx context.Context, repl *Replica) (bool, float64)
}

type baseQueue struct {
	name string
	impl queueImpl
	mu   struct {
		sync.Mutex
		stopped  bool
		disabled bool
		replicas map[RangeID]float64
	}
}

func newBaseQueue(name string, impl queueImpl) *baseQueue {
	bq := &baseQueue{name: name, impl: impl}
	bq.mu.replicas = make(map[RangeID]float64)
	return bq
}

// Add adds the specified replica to the queue, regardless of the return
// value of bq.shouldQueue.
func (bq *baseQueue) Add(repl *Replica, priority float64) (bool, error) {
	bq.mu.Lock()
	defer bq.mu.Unlock()
	return bq.addInternalLocked(repl.Desc(), priority)
}

// MaybeAdd adds the specified replica if bq.shouldQueue says so.
func (bq *baseQueue) MaybeAdd(repl *Replica, now time.Time) {
	bq.maybeAdd(context.Background(), repl, now)
}

func (bq *baseQueue) maybeAdd(ctx context.Context, repl *Replica, now time.Time) {
	bq.mu.Lock()
	defer bq.mu.Unlock()

	if bq.mu.stopped || bq.mu.disabled {
		return
	}
	if !repl.IsInitialized() {
		return
	}
	time.Sleep(100 * time.Millisecond) // system config / lease checks
	repl.maybeInitializeRaftGroup(ctx)

	should, priority := bq.impl.shouldQueue(ctx, repl)
	if !should {
		return
	}
	_, _ = bq.addInternalLocked(repl.Desc(), priority)
}

func (bq *baseQueue) addInternalLocked(desc *RangeDescriptor, priority float64) (bool, error) {
	bq.mu.replicas[desc.RangeID] = priority
	return true, nil
}

// replicaGCQueue manages a queue of replicas to be considered for GC.
type replicaGCQueue struct {
	*baseQueue
}

func newReplicaGCQueue() *replicaGCQueue {
	rgcq := &replicaGCQueue{}
	rgcq.baseQueue = newBaseQueue("replicaGC", rgcq)
	return rgcq
}

func (rgcq *replicaGCQueue) shouldQueue(ctx context.Context, repl *Replica) (bool, float64) {
	return true, 1
}

type replicaQueue interface {
	MaybeAdd(*Replica, time.Time)
}

type replicaScanner struct {
	queues []replicaQueue
}

// waitAndProcess offers the replica to every queue.
func (rs *replicaScanner) waitAndProcess(repl *Replica) {
	for _, q := range rs.queues {
		q.MaybeAdd(repl, time.Now())
	}
}

type Store struct {
	mu struct {
		sync.RWMutex
		replicas map[RangeID]*Replica
	}
	replicaGCQueue *replicaGCQueue
	scanner        *replicaScanner
}

// withReplicaForRequest runs f with the replica's raftMu held.
func (s *Store) withReplicaForRequest(ctx context.Context, id RangeID, f func(context.Context, *Replica) error) error {
	s.mu.RLock()
	r := s.mu.replicas[id]
	s.mu.RUnlock()
	r.raftMu.Lock()
	defer r.raftMu.Unlock()
	return f(ctx, r)
}

func (s *Store) processRaftSnapshotRequest(ctx context.Context, desc RangeDescriptor) error {
	return s.withReplicaForRequest(ctx, desc.RangeID, func(ctx context.Context, r *Replica) error {
		return r.applySnapshot(ctx, desc)
	})
}

func (s *Store) canApplySnapshot(ctx context.Context, desc RangeDescriptor) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.canApplySnapshotLocked(ctx, desc)
}

func (s *Store) canApplySnapshotLocked(ctx context.Context, desc RangeDescriptor) error {
	for _, exReplica := range s.mu.replicas {
		if d := exReplica.Desc(); d.RangeID != desc.RangeID && d.StartKey < desc.EndKey && desc.StartKey < d.EndKey {
			time.Sleep(100 * time.Millisecond) // checking lease activity
			// We unconditionally send this replica through the GC queue.
			_, _ = s.replicaGCQueue.Add(exReplica, 1)
			return fmt.Errorf("snapshot intersects existing range %d", d.RangeID)
		}
	}
	return nil
}

func main() {
	s := &Store{replicaGCQueue: newReplicaGCQueue()}
	s.scanner = &replicaScanner{queues: []replicaQueue{s.replicaGCQueue}}
	r1 := &Replica{RangeID: 1, store: s}
	r1.mu.desc = &RangeDescriptor{RangeID: 1, StartKey: "a", EndKey: "m"}
	s.mu.replicas = map[RangeID]*Replica{1: r1}
	ctx := context.Background()

	done := make(chan string, 3)
	go func() { // Raft snapshot for r1 (raftMu -> Store.mu)
		_ = s.processRaftSnapshotRequest(ctx, RangeDescriptor{RangeID: 1, StartKey: "a", EndKey: "m"})
		done <- "snapshot applied"
	}()
	go func() { // incoming snapshot for r2 overlapping r1 (Store.mu -> bq.mu)
		time.Sleep(10 * time.Millisecond)
		err := s.canApplySnapshot(ctx, RangeDescriptor{RangeID: 2, StartKey: "k", EndKey: "z"})
		done <- fmt.Sprint("canApplySnapshot: ", err)
	}()
	go func() { // replica scanner (bq.mu -> raftMu)
		time.Sleep(20 * time.Millisecond)
		s.scanner.waitAndProcess(r1)
		done <- "scanned"
	}()
	for i := 0; i < 3; i++ {
		fmt.Println(<-done)
	}
}
