// Project: etcd (lease/lessor.go: lessor.Renew; etcdserver/server.go: checkpointer, raftRequestOnce; etcdserver/apply.go)
// Bug: the LeaseKeepAlive goroutine runs lessor.Renew, which holds le.mu and, for a lease with a
// remaining TTL, calls the Checkpointer (le.cp). The server's checkpointer proposes a
// LeaseCheckpoint entry and waits for it to be applied; the apply goroutine calls
// lessor.Checkpoint, which needs le.mu. Renew waits on the apply result while holding le.mu.
// Upstream fix: etcd-io/etcd#10492 releases le.mu before invoking le.cp in Renew.

package main

import (
	"context"
	"fmt"
	"sync"
)

type LeaseID int64

type LeaseCheckpoint struct {
	ID           LeaseID
	RemainingTTL int64
}
type InternalRaftRequest struct {
	ID              uint64
	LeaseCheckpoint []LeaseCheckpoint
}

type Checkpointer func(ctx context.Context, lc []LeaseCheckpoint)

type Lease struct {
	ID           LeaseID
	ttl          int64
	remainingTTL int64
}

type lessor struct {
	mu       sync.RWMutex
	leaseMap map[LeaseID]*Lease
	cp       Checkpointer
}

func (le *lessor) SetCheckpointer(cp Checkpointer) { le.mu.Lock(); defer le.mu.Unlock(); le.cp = cp }

func (le *lessor) Checkpoint(id LeaseID, remainingTTL int64) error {
	le.mu.Lock()
	defer le.mu.Unlock()
	if l, ok := le.leaseMap[id]; ok {
		l.remainingTTL = remainingTTL
	}
	return nil
}

func (le *lessor) Renew(id LeaseID) (int64, error) {
	le.mu.Lock()
	defer le.mu.Unlock()
	l := le.leaseMap[id]
	if l == nil {
		return -1, fmt.Errorf("lease not found")
	}
	// Clear remaining TTL when we renew if it is set.
	if le.cp != nil && l.remainingTTL > 0 {
		le.cp(context.Background(), []LeaseCheckpoint{{ID: l.ID, RemainingTTL: 0}})
	}
	return l.ttl, nil
}

type EtcdServer struct {
	lessor   *lessor
	mu       sync.Mutex
	nextID   uint64
	waits    map[uint64]chan struct{}
	proposeC chan InternalRaftRequest
	stopping chan struct{}
}

func (s *EtcdServer) raftRequestOnce(ctx context.Context, r InternalRaftRequest) error {
	s.mu.Lock()
	s.nextID++
	r.ID = s.nextID
	ch := make(chan struct{}, 1)
	s.waits[r.ID] = ch
	s.mu.Unlock()

	s.proposeC <- r
	select {
	case <-ch: // DEADLOCK HERE
		return nil
	case <-s.stopping:
		return fmt.Errorf("server stopped")
	}
}

func (s *EtcdServer) applyAll() { // applies committed entries and triggers their waiters
	for r := range s.proposeC {
		for _, c := range r.LeaseCheckpoint {
			s.lessor.Checkpoint(c.ID, c.RemainingTTL)
		}
		s.mu.Lock()
		ch := s.waits[r.ID]
		delete(s.waits, r.ID)
		s.mu.Unlock()
		ch <- struct{}{}
	}
}

func main() {
	le := &lessor{leaseMap: map[LeaseID]*Lease{7: {ID: 7, ttl: 3600}}}
	s := &EtcdServer{lessor: le, waits: map[uint64]chan struct{}{}, proposeC: make(chan InternalRaftRequest, 16), stopping: make(chan struct{})}
	le.SetCheckpointer(func(ctx context.Context, lc []LeaseCheckpoint) {
		s.raftRequestOnce(ctx, InternalRaftRequest{LeaseCheckpoint: lc})
	})
	go s.applyAll()

	// The leader checkpointed lease 7 with its remaining TTL; then a client LeaseKeepAlive arrives.
	s.raftRequestOnce(context.Background(), InternalRaftRequest{LeaseCheckpoint: []LeaseCheckpoint{{ID: 7, RemainingTTL: 1800}}})
	ttl, err := le.Renew(7)
	fmt.Println("renewed:", ttl, err)
}
