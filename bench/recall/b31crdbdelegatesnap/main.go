// Project: cockroachdb/cockroach (pkg/kv/kvserver: store_snapshot.go,
// replica_command.go, replica.go, replica_raft.go), v23.1 delegated snapshots
// Issue: cockroachdb/cockroach #106568 "kvserver: leaked replica mu"; fixed by
// PR #106574 "kvserver: avoid leaked replica mutex during delegated snapshot"
// (backported to 23.1 as #106807).
//
// Bug: a delegate store handles a DelegateSendSnapshotRequest in
// Store.HandleDelegatedSnapshot: it looks the sender replica up in the store's
// replica map and calls Replica.followerSendSnapshot, which first validates the
// request in validateSnapshotDelegationRequest. To compare the applied index
// and term with the coordinator's, that function read-locks r.mu (line 157)
// and asks raftStatusRLocked for the raft status. A replica that has not woken
// up yet has no raft group (internalRaftGroup == nil), and on that path the
// function returns "raft status not initialized" without r.mu.RUnlock(). The
// read lock is leaked; the next writer of the replica mutex - here the raft
// scheduler delivering a message to the replica, which wakes it up through
// withRaftGroup and r.mu.Lock() (line 225) - blocks forever, and every
// later reader queues behind it: the replica, and soon the store, is stuck.
// The fix releases r.mu right after reading the index and the status, before
// the nil check.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

type RangeID int64
type ReplicaID int32
type StoreID int32

type ReplicaDescriptor struct {
	NodeID    int32
	StoreID   StoreID
	ReplicaID ReplicaID
}

type RangeDescriptor struct {
	RangeID          RangeID
	Generation       int64
	InternalReplicas []ReplicaDescriptor
}

func (d *RangeDescriptor) GetReplicaDescriptorByID(id ReplicaID) (ReplicaDescriptor, bool) {
	for _, r := range d.InternalReplicas {
		if r.ReplicaID == id {
			return r, true
		}
	}
	return ReplicaDescriptor{}, false
}

type ReplicaState struct {
	RaftAppliedIndex uint64
	Desc             *RangeDescriptor
}

type DelegateSendSnapshotRequest struct {
	RangeID              RangeID
	CoordinatorReplica   ReplicaDescriptor
	RecipientReplica     ReplicaDescriptor
	DelegatedSender      ReplicaDescriptor
	Term                 uint64
	FirstIndex           uint64
	DescriptorGeneration int64
}

type DelegateSnapshotResponse_Status int

const (
	DelegateSnapshotResponse_ERROR DelegateSnapshotResponse_Status = iota
	DelegateSnapshotResponse_APPLIED
)

type DelegateSnapshotResponse struct {
	Status       DelegateSnapshotResponse_Status
	EncodedError error
}

// --- raft -------------------------------------------------------------------

type Status struct {
	Term uint64
	Lead uint64
}

type RawNode struct {
	term uint64
}

func (rn *RawNode) Status() Status { return Status{Term: rn.term} }

func (rn *RawNode) Step(m string) error { return nil }

// --- Replica ----------------------------------------------------------------

type Replica struct {
	RangeID RangeID
	store   *Store

	mu struct {
		// Protects all fields in the mu struct.
		sync.RWMutex
		state ReplicaState
		// internalRaftGroup is created lazily: a replica that has not woken up
		// yet has none.
		internalRaftGroup *RawNode
	}
}

// Desc returns the authoritative range descriptor, acquiring a replica lock in
// the process.
func (r *Replica) Desc() *RangeDescriptor {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.mu.state.Desc
}

func (r *Replica) String() string { return fmt.Sprintf("r%d", r.RangeID) }

// raftStatusRLocked returns the current raft status of the replica. It returns
// nil if the Raft group has not been initialized yet.
func (r *Replica) raftStatusRLocked() *Status {
	if rg := r.mu.internalRaftGroup; rg != nil {
		s := rg.Status()
		return &s
	}
	return nil
}

// validateSnapshotDelegationRequest will validate that this replica can send
// the snapshot that the coordinator requested.
func (r *Replica) validateSnapshotDelegationRequest(
	ctx context.Context, req *DelegateSendSnapshotRequest,
) error {
	desc := r.Desc()
	// If the generation has changed, this snapshot may be useless, so don't
	// attempt to send it.
	if desc.Generation != req.DescriptorGeneration {
		return fmt.Errorf("%s: generation has changed since snapshot was generated %d != %d",
			r, req.DescriptorGeneration, desc.Generation)
	}

	// Check that the snapshot we generated has a descriptor that includes the
	// recipient. If it doesn't, the recipient will reject it, so it's better to
	// not send it in the first place.
	if _, ok := desc.GetReplicaDescriptorByID(req.RecipientReplica.ReplicaID); !ok {
		return fmt.Errorf("%s: couldn't find receiver replica %d in sender descriptor",
			r, req.RecipientReplica.ReplicaID)
	}

	// Check the raft applied state index and term to determine if this replica
	// is not too far behind the leaseholder. If the delegate is too far behind
	// that is also needs a snapshot, then any snapshot it sends will be useless.
	r.mu.RLock()
	replIdx := r.mu.state.RaftAppliedIndex + 1

	status := r.raftStatusRLocked()
	if status == nil {
		// This code path is sometimes hit during scatter for replicas that
		// haven't woken up yet.
		return errors.New("raft status not initialized")
	}
	replTerm := status.Term
	r.mu.RUnlock()

	// Delegate has a different term than the coordinator. This typically means
	// the lease has been transferred, and we should not process this request.
	if replTerm != req.Term {
		return fmt.Errorf("sender: %v is not fit to send snapshot for %v; sender term: %v coordinator term: %v",
			req.DelegatedSender, req.CoordinatorReplica, replTerm, req.Term)
	}

	// Sender replica's snapshot will be rejected if the sender replica's raft
	// applied index is lower than or equal to the log truncated constraint on the
	// leaseholder, as this replica's snapshot will be wasted.
	if replIdx <= req.FirstIndex {
		return fmt.Errorf("sender: %v is not fit to send snapshot; sender first index: %v, coordinator log truncation constraint: %v",
			req.DelegatedSender, replIdx, req.FirstIndex)
	}
	return nil
}

// followerSendSnapshot receives a delegate snapshot request and generates the
// snapshot from this replica.
func (r *Replica) followerSendSnapshot(
	ctx context.Context, recipient ReplicaDescriptor, req *DelegateSendSnapshotRequest,
) (*string, error) {
	// Check the validity conditions twice, once before and once after we obtain
	// the send semaphore.
	if err := r.validateSnapshotDelegationRequest(ctx, req); err != nil {
		return nil, err
	}

	cleanup, err := r.store.reserveSendSnapshot(ctx, req)
	if err != nil {
		return nil, err
	}
	defer cleanup()

	// Check validity again, it is possible that the pending request should not be
	// sent after we are doing waiting.
	if err := r.validateSnapshotDelegationRequest(ctx, req); err != nil {
		return nil, err
	}
	msgAppResp := fmt.Sprintf("MsgAppResp from %v", recipient)
	return &msgAppResp, nil
}

// withRaftGroupLocked calls the supplied function with the (lazily
// initialized) Raft group.
func (r *Replica) withRaftGroupLocked(f func(r *RawNode) error) error {
	if r.mu.internalRaftGroup == nil {
		// Wake the replica up.
		r.mu.internalRaftGroup = &RawNode{term: 7}
	}
	return f(r.mu.internalRaftGroup)
}

// withRaftGroup calls the supplied function with the Raft group, acquiring
// and releasing the Replica lock.
func (r *Replica) withRaftGroup(f func(r *RawNode) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.withRaftGroupLocked(f)
}

// --- Store --------------------------------------------------------------------

type Store struct {
	storeID StoreID
	mu      struct {
		sync.RWMutex
		// replicasByRangeID is a rangeIDReplicaMap (syncutil.IntMap) in the
		// real store; a map filled at startup here.
		replicasByRangeID map[RangeID]*Replica
	}
	snapshotSendQueue chan struct{}
}

func (s *Store) GetReplicaIfExists(rangeID RangeID) *Replica {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.mu.replicasByRangeID[rangeID]
}

func (s *Store) GetReplica(rangeID RangeID) (*Replica, error) {
	if r := s.GetReplicaIfExists(rangeID); r != nil {
		return r, nil
	}
	return nil, fmt.Errorf("r%d was not found on s%d", rangeID, s.storeID)
}

func (s *Store) reserveSendSnapshot(ctx context.Context, req *DelegateSendSnapshotRequest) (func(), error) {
	select {
	case s.snapshotSendQueue <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return func() { <-s.snapshotSendQueue }, nil
}

// HandleDelegatedSnapshot reads the incoming delegated snapshot message and
// throttles sending snapshots before passing the request to the sender replica.
func (s *Store) HandleDelegatedSnapshot(
	ctx context.Context, req *DelegateSendSnapshotRequest,
) *DelegateSnapshotResponse {
	// This can happen if the delegate doesn't know about the range yet. Return an
	// error immediately.
	sender, err := s.GetReplica(req.RangeID)
	if err != nil {
		return &DelegateSnapshotResponse{
			Status:       DelegateSnapshotResponse_ERROR,
			EncodedError: err,
		}
	}

	// Pass the request to the sender replica.
	if _, err := sender.followerSendSnapshot(ctx, req.RecipientReplica, req); err != nil {
		// If an error occurred during snapshot sending, send an error response.
		return &DelegateSnapshotResponse{
			Status:       DelegateSnapshotResponse_ERROR,
			EncodedError: err,
		}
	}
	return &DelegateSnapshotResponse{Status: DelegateSnapshotResponse_APPLIED}
}

// processRaftRequest is what the raft scheduler runs for an incoming raft
// message: it steps the message into the replica's raft group, waking the
// replica up if needed.
func (s *Store) processRaftRequest(ctx context.Context, rangeID RangeID, msg string) error {
	r, err := s.GetReplica(rangeID)
	if err != nil {
		return err
	}
	return r.withRaftGroup(func(raftGroup *RawNode) error {
		return raftGroup.Step(msg)
	})
}

func main() {
	ctx := context.Background()
	s := &Store{storeID: 2, snapshotSendQueue: make(chan struct{}, 1)}
	desc := &RangeDescriptor{
		RangeID:    42,
		Generation: 3,
		InternalReplicas: []ReplicaDescriptor{
			{NodeID: 1, StoreID: 1, ReplicaID: 1},
			{NodeID: 2, StoreID: 2, ReplicaID: 2},
			{NodeID: 3, StoreID: 3, ReplicaID: 3},
		},
	}
	r := &Replica{RangeID: 42, store: s}
	r.mu.state = ReplicaState{RaftAppliedIndex: 100, Desc: desc}
	// r.mu.internalRaftGroup == nil: the replica has not woken up yet.
	s.mu.replicasByRangeID = map[RangeID]*Replica{42: r}

	// The leaseholder (s1) asks this store to send a snapshot to s3.
	resp := s.HandleDelegatedSnapshot(ctx, &DelegateSendSnapshotRequest{
		RangeID:              42,
		CoordinatorReplica:   desc.InternalReplicas[0],
		RecipientReplica:     desc.InternalReplicas[2],
		DelegatedSender:      desc.InternalReplicas[1],
		Term:                 7,
		FirstIndex:           90,
		DescriptorGeneration: 3,
	})
	fmt.Println("delegated snapshot:", resp.Status, resp.EncodedError)

	// The raft scheduler then delivers a message from the leader to r42.
	done := make(chan error)
	go func() {
		done <- s.processRaftRequest(ctx, 42, "MsgHeartbeat")
	}()
	fmt.Println("raft message processed:", <-done)
}
