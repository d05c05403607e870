// Project: cockroachdb/cockroach (pkg/kv/kvserver/replica.go).
// Bug (approximate): Replica.State() holds r.mu.RLock() and goes through
// leaseStatusRLocked -> isLeaseForCurrentDesc, which called the public
// r.Desc() and so RLocked r.mu a second time. A split trigger
// (handleSplitTrigger -> setDescRaftMuLocked -> r.mu.Lock()) queued between
// the two RLocks; the nested RLock waits for the writer, the writer waits for
// the outer RLock.
// Fix: use the descRLocked() variant inside the r.mu-held section.
package crdbreplicadesc_fixed

import (
	"sync"
	"testing"
	"time"
)

type RangeID int64
type RKey string

type RangeDescriptor struct {
	RangeID    RangeID
	StartKey   RKey
	EndKey     RKey
	Generation int64
}

func (d *RangeDescriptor) ContainsKey(k RKey) bool { return k >= d.StartKey && k < d.EndKey }

type Lease struct {
	Replica    int
	Start      RKey
	Expiration int64
}

type ReplicaState struct {
	Desc        *RangeDescriptor
	Lease       *Lease
	GCThreshold int64
}

type LeaseStatus struct {
	Lease *Lease
	Valid bool
}

type StateReport struct {
	ReplicaState
	NumPending  int
	LeaseStatus LeaseStatus
}

type Replica struct {
	RangeID RangeID
	raftMu  sync.Mutex
	mu      struct {
		sync.RWMutex
		state     ReplicaState
		proposals map[string]int
	}
}

func (r *Replica) Desc() *RangeDescriptor {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.mu.state.Desc
}

func (r *Replica) descRLocked() *RangeDescriptor { return r.mu.state.Desc }

func (r *Replica) isLeaseForCurrentDesc(l *Lease) bool {
	return r.descRLocked().ContainsKey(l.Start) // FIX: r.mu already held
}

func (r *Replica) leaseStatusRLocked(now int64) LeaseStatus {
	l := r.mu.state.Lease
	time.Sleep(50 * time.Millisecond) // clock / liveness lookups
	return LeaseStatus{Lease: l, Valid: now < l.Expiration && r.isLeaseForCurrentDesc(l)}
}

// State returns a debug report of the replica (used by /_status/ranges).
func (r *Replica) State() StateReport {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var ri StateReport
	ri.ReplicaState = r.mu.state
	ri.NumPending = len(r.mu.proposals)
	ri.LeaseStatus = r.leaseStatusRLocked(time.Now().UnixNano())
	return ri
}

func (r *Replica) setDescLockedRaftMuLocked(desc *RangeDescriptor) {
	if desc.RangeID != r.RangeID {
		panic("range descriptor ID mismatch")
	}
	r.mu.state.Desc = desc
}

func (r *Replica) setDescRaftMuLocked(desc *RangeDescriptor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.setDescLockedRaftMuLocked(desc)
}

// handleSplitTrigger shrinks the left-hand side descriptor after a split.
func (r *Replica) handleSplitTrigger(leftDesc *RangeDescriptor) {
	r.raftMu.Lock()
	defer r.raftMu.Unlock()
	r.setDescRaftMuLocked(leftDesc)
}

func TestStatusDuringSplit(t *testing.T) {
	r := &Replica{RangeID: 7}
	r.mu.state = ReplicaState{
		Desc:  &RangeDescriptor{RangeID: 7, StartKey: "a", EndKey: "z", Generation: 1},
		Lease: &Lease{Replica: 1, Start: "a", Expiration: time.Now().Add(time.Hour).UnixNano()},
	}
	r.mu.proposals = map[string]int{}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		t.Logf("lease valid: %v", r.State().LeaseStatus.Valid)
	}()
	go func() {
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		r.handleSplitTrigger(&RangeDescriptor{RangeID: 7, StartKey: "a", EndKey: "m", Generation: 2})
	}()
	wg.Wait()
}
