// Project: cockroachdb/cockroach
// Version: v21.1 development (June 2021), regression introduced by PR #61610
// Files/functions: pkg/kv/kvserver/replica_protected_timestamp.go:
// Replica.protectedTimestampRecordApplies,
// Replica.protectedTimestampRecordCurrentlyApplies,
// Replica.checkProtectedTimestampsForGC, Replica.maybeUpdateCachedProtectedTS;
// pkg/kv/kvserver/replica.go: Replica.Desc, Replica.descRLocked;
// pkg/kv/kvserver/mvcc_gc_queue.go (gcQueue.shouldQueue).
// Issue: cockroachdb/cockroach #66759 "kvserver: deadlock in protectedts error
// message", fixed by PR #66760 (backport #66773).
//
// protectedTimestampRecordCurrentlyApplies verifies an
// AdminVerifyProtectedTimestamp request while holding r.mu.RLock (released by
// a defer). When the protected timestamp is at or below the range's GC
// threshold it builds a human readable reason string, and the code added by
// #61610 called r.Desc().StartKey and r.Desc().EndKey for it. Replica.Desc
// acquires r.mu.RLock again. Meanwhile the GC queue evaluates the same replica
// in checkProtectedTimestampsForGC, whose deferred maybeUpdateCachedProtectedTS
// calls r.mu.Lock to publish the cached protected-timestamp state. Once that
// writer is queued on r.mu, the recursive RLock inside the error message
// blocks behind it, and the writer waits for the first RLock: deadlock.
// The fix formats the message from the descriptor already read via
// r.descRLocked() (desc.StartKey, desc.EndKey) instead of calling r.Desc().
package main

import (
	"fmt"
	"sync"
	"time"
)

// syncutil.RWMutex wraps sync.RWMutex with lock assertions.
type RWMutex struct {
	sync.RWMutex
}

func (m *RWMutex) AssertHeld()  {}
func (m *RWMutex) AssertRHeld() {}

type Timestamp struct{ WallTime int64 }

func (t Timestamp) Less(o Timestamp) bool   { return t.WallTime < o.WallTime }
func (t Timestamp) LessEq(o Timestamp) bool { return t.WallTime <= o.WallTime }
func (t Timestamp) String() string          { return fmt.Sprintf("%d,0", t.WallTime) }

type RKey string

type RangeDescriptor struct {
	RangeID  int64
	StartKey RKey
	EndKey   RKey
}

type ReplicaState struct {
	Desc        *RangeDescriptor
	GCThreshold *Timestamp
}

type cachedProtectedTimestampState struct {
	readAt   Timestamp
	earliest Timestamp
}

func (ts *cachedProtectedTimestampState) clearIfNotNewer(existing cachedProtectedTimestampState) {
	if !existing.readAt.Less(ts.readAt) {
		*ts = cachedProtectedTimestampState{}
	}
}

type AdminVerifyProtectedTimestampRequest struct {
	Key, EndKey   RKey
	Protected     Timestamp
	RecordAliveAt Timestamp
}

type Replica struct {
	mu struct {
		RWMutex
		state             ReplicaState
		cachedProtectedTS cachedProtectedTimestampState
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

func (r *Replica) maybeUpdateCachedProtectedTS(ts *cachedProtectedTimestampState) {
	if *ts == (cachedProtectedTimestampState{}) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.cachedProtectedTS.readAt.Less(ts.readAt) {
		r.mu.cachedProtectedTS = *ts
	}
}

func (r *Replica) protectedTimestampRecordApplies(args *AdminVerifyProtectedTimestampRequest) (bool, string) {
	doesNotApply, willApply, reason := r.protectedTimestampRecordCurrentlyApplies(args)
	if doesNotApply {
		return false, reason
	}
	return willApply, ""
}

func (r *Replica) protectedTimestampRecordCurrentlyApplies(args *AdminVerifyProtectedTimestampRequest) (doesNotApply, willApply bool, doesNotApplyReason string) {
	var read cachedProtectedTimestampState
	defer r.maybeUpdateCachedProtectedTS(&read)
	r.mu.RLock()
	defer r.mu.RUnlock()
	defer read.clearIfNotNewer(r.mu.cachedProtectedTS)

	desc := r.descRLocked()
	if args.Key < desc.StartKey || args.EndKey > desc.EndKey {
		return true, false, "key range mismatch"
	}
	// The GC queue processes this replica concurrently.
	time.Sleep(50 * time.Millisecond)
	if args.Protected.LessEq(*r.mu.state.GCThreshold) {
		gcReason := fmt.Sprintf("protected ts: %s is less than equal to the GCThreshold: %s for the range %s - %s",
			args.Protected.String(), r.mu.state.GCThreshold.String(),
			r.Desc().StartKey, r.Desc().EndKey)
		return true, false, gcReason
	}
	read.readAt = Timestamp{WallTime: 100}
	return false, true, ""
}

// checkProtectedTimestampsForGC is called by the GC queue.
func (r *Replica) checkProtectedTimestampsForGC() (canGC bool) {
	var read cachedProtectedTimestampState
	defer r.maybeUpdateCachedProtectedTS(&read)
	r.mu.RLock()
	defer r.mu.RUnlock()
	defer read.clearIfNotNewer(r.mu.cachedProtectedTS)
	read = cachedProtectedTimestampState{readAt: Timestamp{WallTime: 90}, earliest: Timestamp{WallTime: 5}}
	return r.mu.state.GCThreshold.Less(read.earliest)
}

func main() {
	r := &Replica{}
	r.mu.state = ReplicaState{
		Desc:        &RangeDescriptor{RangeID: 42, StartKey: "a", EndKey: "z"},
		GCThreshold: &Timestamp{WallTime: 10},
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // AdminVerifyProtectedTimestamp request
		defer wg.Done()
		ok, reason := r.protectedTimestampRecordApplies(&AdminVerifyProtectedTimestampRequest{
			Key: "b", EndKey: "c", Protected: Timestamp{WallTime: 8}, RecordAliveAt: Timestamp{WallTime: 1},
		})
		fmt.Println(ok, reason)
	}()
	go func() { // gcQueue.shouldQueue
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		fmt.Println("canGC:", r.checkProtectedTimestampsForGC())
	}()
	wg.Wait()
}
