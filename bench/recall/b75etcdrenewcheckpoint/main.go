// Project: etcd-io/etcd (lease/lessor.go, etcdserver/server.go, etcdserver/apply.go, pkg/wait/wait.go), v3.4 development, early 2019 (PR #10492, approximate).
// Bug: after lease checkpointing was added, lessor.Renew kept le.mu locked while it called the checkpointer to clear a lease's remainingTTL; the checkpointer is EtcdServer.raftRequestOnce, which waits until the apply loop has applied the LeaseCheckpoint entry, and applying it calls lessor.Checkpoint, which needs le.mu.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ---- lease/lessor.go ----

type LeaseID int64

var (
	ErrNotPrimary    = errors.New("not a primary lessor")
	ErrLeaseNotFound = errors.New("lease not found")
)

type LeaseCheckpoint struct {
	ID           int64
	RemainingTTL int64
}

type LeaseCheckpointRequest struct{ Checkpoints []*LeaseCheckpoint }

// Checkpointer permits checkpointing of lease remaining TTLs to the consensus log.
type Checkpointer func(ctx context.Context, lc *LeaseCheckpointRequest)

type Lease struct {
	ID           LeaseID
	ttl          int64
	remainingTTL int64
	expiry       time.Time
	revokec      chan struct{}
}

func (l *Lease) expired() bool { return time.Until(l.expiry) <= 0 }

func (l *Lease) refresh(extend time.Duration) {
	l.expiry = time.Now().Add(extend + time.Duration(l.ttl)*time.Second)
}

type lessor struct {
	mu                  sync.RWMutex
	demotec             chan struct{}
	leaseMap            map[LeaseID]*Lease
	leaseCheckpointHeap []LeaseID
	cp                  Checkpointer
}

func (le *lessor) isPrimary() bool { return le.demotec != nil }

func (le *lessor) SetCheckpointer(cp Checkpointer) {
	le.mu.Lock()
	defer le.mu.Unlock()
	le.cp = cp
}

func (le *lessor) Grant(id LeaseID, ttl int64) *Lease {
	le.mu.Lock()
	defer le.mu.Unlock()
	l := &Lease{ID: id, ttl: ttl, revokec: make(chan struct{})}
	l.refresh(0)
	le.leaseMap[id] = l
	return l
}

func (le *lessor) scheduleCheckpointIfNeeded(l *Lease) {
	if le.cp != nil && l.remainingTTL > 0 {
		le.leaseCheckpointHeap = append(le.leaseCheckpointHeap, l.ID)
	}
}

// Checkpoint is called by the apply loop when a LeaseCheckpoint entry commits.
func (le *lessor) Checkpoint(id LeaseID, remainingTTL int64) error {
	le.mu.Lock()
	defer le.mu.Unlock()
	if l, ok := le.leaseMap[id]; ok {
		l.remainingTTL = remainingTTL
		if le.isPrimary() {
			le.scheduleCheckpointIfNeeded(l)
		}
	}
	return nil
}

// Renew renews an existing lease with a given ID. It returns the renewed TTL.
func (le *lessor) Renew(id LeaseID) (int64, error) {
	le.mu.Lock()

	unlock := func() { le.mu.Unlock() }
	defer func() { unlock() }()

	if !le.isPrimary() {
		return -1, ErrNotPrimary
	}
	demotec := le.demotec

	l := le.leaseMap[id]
	if l == nil {
		return -1, ErrLeaseNotFound
	}

	if l.expired() {
		// Current goroutine is blocked on revokec, and it might hold the lock.
		unlock()
		unlock = func() {}
		select {
		case <-l.revokec:
			return -1, ErrLeaseNotFound
		case <-demotec:
			return -1, ErrNotPrimary
		}
	}

	// Clear remaining TTL when we renew if it is set. By applying a RAFT entry
	// only when the remainingTTL is already set, we limit the number of RAFT
	// entries written per lease to a max of 2 per checkpoint interval.
	if le.cp != nil && l.remainingTTL > 0 {
		le.cp(context.Background(), &LeaseCheckpointRequest{Checkpoints: []*LeaseCheckpoint{{ID: int64(l.ID), RemainingTTL: 0}}})
	}

	l.refresh(0)
	return l.ttl, nil
}

// ---- pkg/wait/wait.go ----

type Wait interface {
	Register(id uint64) <-chan interface{}
	Trigger(id uint64, x interface{})
}

type list struct {
	l sync.RWMutex
	m map[uint64]chan interface{}
}

func (w *list) Register(id uint64) <-chan interface{} {
	w.l.Lock()
	defer w.l.Unlock()
	ch := make(chan interface{}, 1)
	w.m[id] = ch
	return ch
}

func (w *list) Trigger(id uint64, x interface{}) {
	w.l.Lock()
	ch := w.m[id]
	delete(w.m, id)
	w.l.Unlock()
	if ch != nil {
		ch <- x
		close(ch)
	}
}

// ---- etcdserver/server.go and apply.go ----

type InternalRaftRequest struct {
	ID              uint64
	LeaseCheckpoint *LeaseCheckpointRequest
}

type EtcdServer struct {
	lessor   *lessor
	w        Wait
	propc    chan InternalRaftRequest
	reqIDGen uint64
	idMu     sync.Mutex
	stopping chan struct{}
}

func (s *EtcdServer) raftRequestOnce(ctx context.Context, r InternalRaftRequest) (interface{}, error) {
	s.idMu.Lock()
	s.reqIDGen++
	r.ID = s.reqIDGen
	s.idMu.Unlock()
	ch := s.w.Register(r.ID)
	s.propc <- r // proposed and committed by raft
	select {
	case x := <-ch:
		return x, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.stopping:
		return nil, errors.New("etcdserver: server stopped")
	}
}

type applierV3backend struct{ s *EtcdServer }

func (a *applierV3backend) LeaseCheckpoint(lc *LeaseCheckpointRequest) error {
	for _, c := range lc.Checkpoints {
		if err := a.s.lessor.Checkpoint(LeaseID(c.ID), c.RemainingTTL); err != nil {
			return err
		}
	}
	return nil
}

// run is the raft Ready / apply loop, reduced to committed proposals.
func (s *EtcdServer) run() {
	a := &applierV3backend{s: s}
	for r := range s.propc {
		var res error
		if r.LeaseCheckpoint != nil {
			res = a.LeaseCheckpoint(r.LeaseCheckpoint)
		}
		s.w.Trigger(r.ID, res)
	}
}

func main() {
	le := &lessor{leaseMap: make(map[LeaseID]*Lease), demotec: make(chan struct{})}
	s := &EtcdServer{lessor: le, w: &list{m: make(map[uint64]chan interface{})}, propc: make(chan InternalRaftRequest), stopping: make(chan struct{})}
	le.SetCheckpointer(func(ctx context.Context, cp *LeaseCheckpointRequest) {
		s.raftRequestOnce(ctx, InternalRaftRequest{LeaseCheckpoint: cp})
	})
	go s.run()

	le.Grant(7, 60)
	// The checkpoint loop persisted the remaining TTL of lease 7.
	s.raftRequestOnce(context.Background(), InternalRaftRequest{LeaseCheckpoint: &LeaseCheckpointRequest{Checkpoints: []*LeaseCheckpoint{{ID: 7, RemainingTTL: 42}}}})

	// LeaseKeepAlive from a client.
	ttl, err := le.Renew(7)
	fmt.Println("renewed", ttl, err)
}
