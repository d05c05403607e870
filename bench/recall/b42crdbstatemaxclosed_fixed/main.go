// Project: cockroachdb/cockroach, release 19.1 (pkg/storage).
// Files/functions: pkg/storage/replica.go (Replica.State, Replica.maxClosed),
// pkg/storage/closedts (Provider.MaxClosed), pkg/storage/store.go
// (Store.GetReplica), pkg/server/status.go (statusServer.Range, which builds
// RangeInfo from Replica.State), pkg/storage/replica_raft.go (the apply path
// that write-locks Replica.mu).
// Fix: PR #36569 "storage: avoid deadlock due to reentrant RLock", backported
// to 19.1 as PR #36577.
//
// Replica.State read-locks r.mu for the whole function and, near the end,
// fills in ActiveClosedTimestamp by calling r.maxClosed, which read-locks r.mu
// a second time to read the lease applied index, the lease and the initial
// max closed timestamp before asking the closed timestamp provider. Go's
// RWMutex prefers writers: if the raft apply path calls r.mu.Lock between
// the two read locks, the writer waits for State's first read lock and
// maxClosed's read lock waits for the writer. The status endpoint (and every
// later user of the replica) hangs. The fix computes maxClosed first, before
// State takes its own read lock.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type NodeID int32
type RangeID int64
type Epoch int64
type LAI int64

type Timestamp struct{ WallTime int64 }

func (t *Timestamp) Forward(s Timestamp) {
	if s.WallTime > t.WallTime {
		*t = s
	}
}

type ReplicaDescriptor struct{ NodeID NodeID }

type Lease struct {
	Replica ReplicaDescriptor
	Epoch   int64
	Start   Timestamp
}

type ReplicaState struct {
	LeaseAppliedIndex uint64
	Lease             *Lease
}

type RangeInfo struct {
	ReplicaState          ReplicaState
	LastIndex, NumPending uint64
	RaftLogSize           int64
	ActiveClosedTimestamp Timestamp
}

// Provider is the closed timestamp subsystem (pkg/storage/closedts).
type Provider interface {
	MaxClosed(NodeID, RangeID, Epoch, LAI) Timestamp
}

type provider struct{ closed map[NodeID]Timestamp }

func (p *provider) MaxClosed(n NodeID, _ RangeID, _ Epoch, _ LAI) Timestamp {
	return p.closed[n]
}

type ClosedTimestamp struct{ Provider Provider }

type StoreConfig struct{ ClosedTimestamp *ClosedTimestamp }

type Store struct {
	cfg StoreConfig
	mu  struct {
		sync.RWMutex
		replicas map[RangeID]*Replica
	}
}

func (s *Store) GetReplica(id RangeID) (*Replica, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.mu.replicas[id]
	if !ok {
		return nil, fmt.Errorf("r%d not found", id)
	}
	return r, nil
}

type Replica struct {
	RangeID RangeID
	store   *Store
	mu      struct {
		sync.RWMutex
		state            ReplicaState
		lastIndex        uint64
		proposals        map[int64]struct{}
		raftLogSize      int64
		initialMaxClosed Timestamp
	}
}

// cloneReplicaState stands in for protoutil.Clone of the replica state proto.
func cloneReplicaState(s *ReplicaState) ReplicaState {
	time.Sleep(50 * time.Millisecond)
	c := *s
	l := *s.Lease
	c.Lease = &l
	return c
}

// State returns a copy of the internal state of the Replica, along with some
// auxiliary information.
func (r *Replica) State() RangeInfo {
	var ri RangeInfo

	// NB: this acquires an RLock(). Reentrant RLocks are deadlock prone, so do
	// this first before RLocking below.
	ri.ActiveClosedTimestamp = r.maxClosed(context.Background())

	r.mu.RLock()
	defer r.mu.RUnlock()
	ri.ReplicaState = cloneReplicaState(&r.mu.state)
	ri.LastIndex = r.mu.lastIndex
	ri.NumPending = uint64(len(r.mu.proposals))
	ri.RaftLogSize = r.mu.raftLogSize
	return ri
}

// maxClosed returns the maximum closed timestamp for this range.
func (r *Replica) maxClosed(ctx context.Context) Timestamp {
	r.mu.RLock()
	lai := r.mu.state.LeaseAppliedIndex
	lease := *r.mu.state.Lease
	initialMaxClosed := r.mu.initialMaxClosed
	r.mu.RUnlock()
	maxClosed := r.store.cfg.ClosedTimestamp.Provider.MaxClosed(
		lease.Replica.NodeID, r.RangeID, Epoch(lease.Epoch), LAI(lai))
	maxClosed.Forward(lease.Start)
	maxClosed.Forward(initialMaxClosed)
	return maxClosed
}

// applyRaftCommand is the write side: the raft apply path bumps the lease
// applied index under r.mu.
func (r *Replica) applyRaftCommand(idx uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.state.LeaseAppliedIndex = idx
	r.mu.lastIndex = idx
}

type statusServer struct{ stores []*Store }

// Range serves the range status endpoint.
func (s *statusServer) Range(id RangeID) []RangeInfo {
	var infos []RangeInfo
	for _, st := range s.stores {
		rep, err := st.GetReplica(id)
		if err != nil {
			continue
		}
		infos = append(infos, rep.State())
	}
	return infos
}

func main() {
	st := &Store{cfg: StoreConfig{ClosedTimestamp: &ClosedTimestamp{
		Provider: &provider{closed: map[NodeID]Timestamp{1: {WallTime: 10}}},
	}}}
	st.mu.replicas = map[RangeID]*Replica{}
	rep := &Replica{RangeID: 7, store: st}
	rep.mu.state = ReplicaState{
		LeaseAppliedIndex: 1,
		Lease:             &Lease{Replica: ReplicaDescriptor{NodeID: 1}, Epoch: 1},
	}
	rep.mu.proposals = map[int64]struct{}{}
	st.mu.replicas[7] = rep
	status := &statusServer{stores: []*Store{st}}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		fmt.Println(status.Range(7))
	}()
	time.Sleep(20 * time.Millisecond)
	go func() {
		defer wg.Done()
		rep.applyRaftCommand(2)
	}()
	wg.Wait()
	fmt.Println("done")
}
