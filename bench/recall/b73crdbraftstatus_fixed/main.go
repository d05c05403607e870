// Project: cockroachdb/cockroach (storage/store.go, storage/raft_log_queue.go, storage/queue.go), early 2016 (GoBench cockroach#3710, approximate).
// Bug: Store.ForceRaftLogScanAndProcess holds s.mu.RLock while it offers every replica to the raft log queue, and raftLogQueue.shouldQueue calls getTruncatableIndexes, which read-locks s.mu again through Store.RaftStatus; once the raft processing goroutine is waiting in s.mu.Lock the recursive RLock blocks and both goroutines hang.
package main

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

type RangeID int64

const (
	raftLogPadding             = 2
	RaftLogQueueStaleThreshold = 10
)

type StateType int

const (
	StateFollower StateType = iota
	StateLeader
)

// Status mirrors raft.Status: the leader's view of its followers' progress.
type Status struct {
	RaftState StateType
	Progress  map[uint64]uint64 // replica id -> match index
}

type Replica struct {
	RangeID RangeID
	store   *Store
	mu      sync.Mutex
	status  Status
	first   uint64
	last    uint64
	ticks   int
}

func (r *Replica) RaftStatus() *Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.status
	return &st
}

// FirstIndex reads the truncated state from the engine.
func (r *Replica) FirstIndex() (uint64, error) {
	time.Sleep(3 * time.Millisecond) // engine read
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first, nil
}

func (r *Replica) tick() {
	r.mu.Lock()
	r.ticks++
	r.mu.Unlock()
}

type Store struct {
	mu           sync.RWMutex // protects replicas
	replicas     map[RangeID]*Replica
	raftLogQueue *raftLogQueue
	stopper      chan struct{}
}

// RaftStatus returns the current raft status of the given range.
func (s *Store) RaftStatus(rangeID RangeID) *Status {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if r, ok := s.replicas[rangeID]; ok {
		return r.RaftStatus()
	}
	return nil
}

// processRaft ticks every replica's raft group under the store lock.
func (s *Store) processRaft() {
	for {
		select {
		case <-s.stopper:
			return
		default:
		}
		s.mu.Lock()
		for _, r := range s.replicas {
			r.tick()
		}
		s.mu.Unlock()
		time.Sleep(time.Millisecond) // raft tick interval
	}
}

// ForceRaftLogScanAndProcess iterates over all replicas and processes any
// that are due for raft log truncation (used in tests).
func (s *Store) ForceRaftLogScanAndProcess() {
	// Add each replica to the queue outside of the store lock.
	s.mu.RLock()
	replicas := make([]*Replica, 0, len(s.replicas))
	for _, r := range s.replicas {
		replicas = append(replicas, r)
	}
	s.mu.RUnlock()
	for _, r := range replicas {
		s.raftLogQueue.MaybeAdd(r, time.Now())
	}
	s.raftLogQueue.DrainQueue()
}

type queueImpl interface {
	shouldQueue(now time.Time, r *Replica) (bool, float64)
	process(now time.Time, r *Replica) error
}

type replicaItem struct {
	r        *Replica
	priority float64
}

type baseQueue struct {
	sync.Mutex
	name  string
	impl  queueImpl
	items []replicaItem
}

func (bq *baseQueue) MaybeAdd(repl *Replica, now time.Time) {
	bq.Lock()
	defer bq.Unlock()
	should, priority := bq.impl.shouldQueue(now, repl)
	if should {
		bq.items = append(bq.items, replicaItem{repl, priority})
	}
}

func (bq *baseQueue) DrainQueue() {
	bq.Lock()
	items := bq.items
	bq.items = nil
	bq.Unlock()
	sort.Slice(items, func(i, j int) bool { return items[i].priority > items[j].priority })
	for _, it := range items {
		if err := bq.impl.process(time.Now(), it.r); err != nil {
			fmt.Println(bq.name, err)
		}
	}
}

type raftLogQueue struct{ baseQueue }

func newRaftLogQueue() *raftLogQueue {
	rlq := &raftLogQueue{}
	rlq.baseQueue = baseQueue{name: "raftlog", impl: rlq}
	return rlq
}

func getQuorumMatchedIndex(st *Status, padding uint64) uint64 {
	var matched []uint64
	for _, m := range st.Progress {
		matched = append(matched, m)
	}
	sort.Slice(matched, func(i, j int) bool { return matched[i] > matched[j] })
	index := matched[len(matched)/2]
	if index < padding {
		return 0
	}
	return index - padding
}

// getTruncatableIndexes returns the number of truncatable indexes and the
// oldest index that cannot be truncated for the replica.
func getTruncatableIndexes(r *Replica) (uint64, uint64, error) {
	raftStatus := r.store.RaftStatus(r.RangeID)
	if raftStatus == nil || raftStatus.RaftState != StateLeader {
		return 0, 0, nil
	}
	oldestIndex := getQuorumMatchedIndex(raftStatus, raftLogPadding)
	firstIndex, err := r.FirstIndex()
	if err != nil {
		return 0, 0, err
	}
	if oldestIndex < firstIndex {
		return 0, firstIndex, nil
	}
	return oldestIndex - firstIndex, oldestIndex, nil
}

func (*raftLogQueue) shouldQueue(now time.Time, r *Replica) (bool, float64) {
	truncatable, _, err := getTruncatableIndexes(r)
	if err != nil {
		return false, 0
	}
	return truncatable >= RaftLogQueueStaleThreshold, float64(truncatable)
}

func (*raftLogQueue) process(now time.Time, r *Replica) error {
	_, oldest, err := getTruncatableIndexes(r)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.first = oldest
	r.mu.Unlock()
	return nil
}

func main() {
	s := &Store{replicas: map[RangeID]*Replica{}, raftLogQueue: newRaftLogQueue(), stopper: make(chan struct{})}
	for id := RangeID(1); id <= 8; id++ {
		s.replicas[id] = &Replica{
			RangeID: id, store: s, first: 1, last: 100,
			status: Status{RaftState: StateLeader, Progress: map[uint64]uint64{1: 100, 2: 90, 3: 80}},
		}
	}
	go s.processRaft()
	time.Sleep(2 * time.Millisecond)
	s.ForceRaftLogScanAndProcess()
	close(s.stopper)
	for id, r := range s.replicas {
		fmt.Printf("r%d first index %d\n", id, r.first)
	}
}
