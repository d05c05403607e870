// Project: cockroachdb/cockroach (pkg/kv/kvserver/replica_protected_timestamp.go, replica.go), v21.1, June 2021.
// Bug: Replica.protectedTimestampRecordCurrentlyApplies, reached from AdminVerifyProtectedTimestamp during backups, holds r.mu.RLock and on the rejection path formats its error with r.Desc(), which read-locks r.mu again; when a raft application goroutine queues r.mu.Lock (setDesc) between the two read locks, both goroutines wait forever (PR #66760 "kvserver: fix deadlock in protectedTimestampRecordCurrentlyApplies", fixed by using the descriptor already read under the lock; the exact error branch is approximate).
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

type Timestamp struct{ WallTime int64 }

func (t Timestamp) Less(o Timestamp) bool   { return t.WallTime < o.WallTime }
func (t Timestamp) LessEq(o Timestamp) bool { return t.WallTime <= o.WallTime }

type RangeDescriptor struct {
	RangeID          int64
	StartKey, EndKey string
	Generation       int64
}

func (d *RangeDescriptor) String() string {
	return fmt.Sprintf("r%d:[%s-%s) gen=%d", d.RangeID, d.StartKey, d.EndKey, d.Generation)
}

type ReplicaState struct {
	Desc        *RangeDescriptor
	GCThreshold *Timestamp
}

type AdminVerifyProtectedTimestampRequest struct {
	RecordID      string
	Protected     Timestamp
	RecordAliveAt Timestamp
}

var verbosity = 0

func vEventf(ctx context.Context, level int, format string, args ...interface{}) {
	if level <= verbosity {
		fmt.Printf(format+"\n", args...)
	}
}

type Replica struct {
	RangeID int64
	mu      struct {
		sync.RWMutex
		state ReplicaState
	}
	protectedTimestampMu struct {
		sync.Mutex
		minStateReadTimestamp Timestamp
		pendingGCThreshold    Timestamp
	}
}

// Desc returns the authoritative range descriptor, acquiring a replica lock
// in the process.
func (r *Replica) Desc() *RangeDescriptor {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.mu.state.Desc
}

// descRLocked returns the range descriptor; r.mu must be held.
func (r *Replica) descRLocked() *RangeDescriptor {
	return r.mu.state.Desc
}

// setDescRaftMuLocked is called when a split/merge/replica change is applied.
func (r *Replica) setDescRaftMuLocked(ctx context.Context, desc *RangeDescriptor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.state.Desc = desc
}

func (r *Replica) protectedTimestampRecordCurrentlyApplies(
	ctx context.Context, args *AdminVerifyProtectedTimestampRequest,
) (doesNotApply, willApply bool, _ error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	desc := r.descRLocked()
	vEventf(ctx, 2, "verifying protected timestamp record %s on %s", args.RecordID, desc)

	// Give the raft goroutine the chance to queue a writer on r.mu.
	time.Sleep(50 * time.Millisecond)

	// If the replica's GC threshold is already above the protected timestamp
	// the record cannot apply.
	if args.Protected.LessEq(*r.mu.state.GCThreshold) {
		gcThreshold := *r.mu.state.GCThreshold
		return false, false, fmt.Errorf(
			"[%s] cannot protect %v for record %s: already below GC threshold %v",
			desc, args.Protected, args.RecordID, gcThreshold)
	}

	r.protectedTimestampMu.Lock()
	defer r.protectedTimestampMu.Unlock()
	if args.Protected.Less(r.protectedTimestampMu.pendingGCThreshold) {
		return false, false, errors.New("pending GC threshold above protected timestamp")
	}
	if r.protectedTimestampMu.minStateReadTimestamp.Less(args.RecordAliveAt) {
		r.protectedTimestampMu.minStateReadTimestamp = args.RecordAliveAt
	}
	return false, true, nil
}

func (r *Replica) protectedTimestampRecordApplies(
	ctx context.Context, args *AdminVerifyProtectedTimestampRequest,
) (willApply bool, _ error) {
	doesNotApply, willApply, err := r.protectedTimestampRecordCurrentlyApplies(ctx, args)
	if err != nil || doesNotApply || willApply {
		return willApply, err
	}
	return false, nil
}

// AdminVerifyProtectedTimestamp is issued by a backup/import job before it
// relies on its protected timestamp record.
func (r *Replica) AdminVerifyProtectedTimestamp(
	ctx context.Context, args AdminVerifyProtectedTimestampRequest,
) (bool, error) {
	return r.protectedTimestampRecordApplies(ctx, &args)
}

func main() {
	ctx := context.Background()
	r := &Replica{RangeID: 42}
	r.mu.state.Desc = &RangeDescriptor{RangeID: 42, StartKey: "/Table/53", EndKey: "/Table/54", Generation: 3}
	r.mu.state.GCThreshold = &Timestamp{WallTime: 200}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // backup job verifying a stale protection record
		defer wg.Done()
		ok, err := r.AdminVerifyProtectedTimestamp(ctx, AdminVerifyProtectedTimestampRequest{
			RecordID: "pts-1", Protected: Timestamp{WallTime: 100}, RecordAliveAt: Timestamp{WallTime: 150},
		})
		fmt.Println("verified:", ok, err)
	}()
	go func() { // raft application of a split trigger
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		r.setDescRaftMuLocked(ctx, &RangeDescriptor{RangeID: 42, StartKey: "/Table/53", EndKey: "/Table/53/1/500", Generation: 4})
	}()
	wg.Wait()
	fmt.Println("done")
}
