// Project: cockroachdb/cockroach, master during the 20.2 cycle (August 2020).
// Files: pkg/kv/kvserver/replica_send.go (Replica.executeBatchWithConcurrencyRetries),
// pkg/kv/kvserver/replica.go (Replica.checkExecutionCanProceed,
// Replica.shouldWaitForPendingMergeRLocked, Replica.getFreezeStart,
// Replica.getFreezeStartRLocked, Replica.mergeInProgressRLocked),
// pkg/kv/kvserver/replica_raft.go (Replica.withRaftGroup).
// Issue: cockroachdb/cockroach#52514; fixed by PR #52540 "kvserver: remove
// unsafe recursive RLock acquisition".
//
// After latches are acquired, checkExecutionCanProceed read-locks Replica.mu
// once and runs all of its checks under that read lock: initialization,
// destroy status, span containment, lease, GC threshold, and whether a range
// merge is in progress. When the replica is the right-hand side of a merge
// that has been subsumed, the request must wait unless it is a read below the
// merge's freeze time, so shouldWaitForPendingMergeRLocked looks the freeze
// start up. It did so through getFreezeStart, the locking accessor, which
// read-locks Replica.mu a second time. The raft goroutine takes the write
// lock on Replica.mu all the time (withRaftGroup while handling a Ready, lease
// and descriptor updates), and once it is queued behind the outer read lock
// the nested RLock cannot be granted: the request goroutine and the raft
// goroutine wait for each other, and the range stops serving. The fix calls
// getFreezeStartRLocked, which relies on the caller's lock.
//
// This is the fixed version.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

type Timestamp struct{ WallTime int64 }

func (t Timestamp) Less(o Timestamp) bool { return t.WallTime < o.WallTime }

type RangeDescriptor struct{ StartKey, EndKey string }

type BatchRequest struct {
	Key       string
	Timestamp Timestamp
	ReadOnly  bool
}

type Guard struct{ latchesHeld bool }

func (g *Guard) HoldingLatches() bool { return g != nil && g.latchesHeld }

type RawNode struct{ ticks int }

type Replica struct {
	mu struct {
		sync.RWMutex
		desc          *RangeDescriptor
		destroyed     error
		leaseExpires  Timestamp
		gcThreshold   Timestamp
		mergeComplete chan struct{}
		freezeStart   Timestamp
		internalRaft  *RawNode
	}
}

var errMergeInProgress = errors.New("range is being merged; request must wait")

func (r *Replica) isInitializedRLocked() bool { return r.mu.desc != nil }

func (r *Replica) mergeInProgressRLocked() bool { return r.mu.mergeComplete != nil }

func (r *Replica) getFreezeStartRLocked() Timestamp { return r.mu.freezeStart }

func (r *Replica) getFreezeStart() Timestamp {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.getFreezeStartRLocked()
}

func (r *Replica) checkSpanInRangeRLocked(_ context.Context, key string) error {
	if key < r.mu.desc.StartKey || key >= r.mu.desc.EndKey {
		return fmt.Errorf("key %q outside of bounds", key)
	}
	return nil
}

func (r *Replica) leaseGoodToGoRLocked(_ context.Context, ts Timestamp) error {
	time.Sleep(50 * time.Millisecond) // clock and liveness reads on a loaded node
	if !ts.Less(r.mu.leaseExpires) {
		return errors.New("lease expired")
	}
	return nil
}

func (r *Replica) shouldWaitForPendingMergeRLocked(_ context.Context, ba *BatchRequest) error {
	if !r.mergeInProgressRLocked() {
		return nil
	}
	// Reads at or below the merge's freeze time may proceed.
	freezeStart := r.getFreezeStartRLocked()
	if ba.ReadOnly && !freezeStart.Less(ba.Timestamp) {
		return nil
	}
	return errMergeInProgress
}

func (r *Replica) checkExecutionCanProceed(ctx context.Context, ba *BatchRequest, g *Guard) error {
	r.mu.RLock()
	defer r.mu.RUnlock()

	if !r.isInitializedRLocked() {
		return errors.New("replica not initialized")
	}
	if err := r.mu.destroyed; err != nil {
		return err
	}
	if err := r.checkSpanInRangeRLocked(ctx, ba.Key); err != nil {
		return err
	}
	if err := r.leaseGoodToGoRLocked(ctx, ba.Timestamp); err != nil {
		return err
	}
	if ba.Timestamp.Less(r.mu.gcThreshold) {
		return errors.New("batch timestamp below GC threshold")
	}
	if r.mergeInProgressRLocked() && g.HoldingLatches() {
		if err := r.shouldWaitForPendingMergeRLocked(ctx, ba); err != nil {
			return err
		}
	}
	return nil
}

func (r *Replica) executeBatchWithConcurrencyRetries(ctx context.Context, ba *BatchRequest) error {
	g := &Guard{latchesHeld: true} // concurrency manager sequenced the request
	if err := r.checkExecutionCanProceed(ctx, ba, g); err != nil {
		return err
	}
	return nil
}

func (r *Replica) withRaftGroup(f func(raftGroup *RawNode) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return f(r.mu.internalRaft)
}

func main() {
	r := &Replica{}
	r.mu.desc = &RangeDescriptor{StartKey: "m", EndKey: "z"}
	r.mu.leaseExpires = Timestamp{WallTime: 1000}
	r.mu.mergeComplete = make(chan struct{}) // Subsume has been applied
	r.mu.freezeStart = Timestamp{WallTime: 500}
	r.mu.internalRaft = &RawNode{}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // a follower read at ts 400, below the freeze
		defer wg.Done()
		err := r.executeBatchWithConcurrencyRetries(context.Background(), &BatchRequest{Key: "p", Timestamp: Timestamp{WallTime: 400}, ReadOnly: true})
		fmt.Println("read finished:", err)
	}()
	go func() { // the raft scheduler ticking / handling a Ready
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		_ = r.withRaftGroup(func(rn *RawNode) error { rn.ticks++; return nil })
		fmt.Println("raft group ticked")
	}()
	wg.Wait()
}
