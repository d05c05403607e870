// Project: cockroachdb/cockroach (pkg/util/stop/stopper.go, pkg/kv/kvserver:
// store.go, store_raft.go, replica_range_lease.go), release-21.1
// Issue: cockroachdb/cockroach#63761 "kvserver: deadlock stopping server because
// of stopper<->lease acquisition cycle", fixed by PR #63867 "stop: break
// deadlock between Stopper.mu and Replica.mu" (backport #63871).
//
// Stopper.Stop ran all registered closers while holding the stopper's write
// lock s.mu. PR #61279 registered a closer (a stop.CloserFn) that visits all
// replicas of the store; storeReplicaVisitor.Visit read-locks each replica's
// r.mu to skip destroyed replicas (line 191). Meanwhile a lease acquisition
// holds r.mu (write) in redirectOnOrAcquireLease and, in
// pendingLeaseRequest.InitOrJoinRequest, starts the lease request as a stopper
// task; RunAsyncTask's runPrelude read-locks s.mu to decide whether the task
// must be refused (line 81).
// Stop: s.mu (W) -> closer -> VisitReplicas -> r.mu (R) at line 191.
// Lease: r.mu (W) -> InitOrJoinRequest -> RunAsyncTask -> s.mu (R) at line 81.
// Both wait forever.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// ---- pkg/util/stop ----

// Closer is an interface for objects to attach to the stopper to
// be closed once the stopper completes.
type Closer interface {
	Close()
}

// CloserFn is type that allows any function to be a Closer.
type CloserFn func()

// Close implements the Closer interface.
func (f CloserFn) Close() { f() }

// ErrUnavailable indicates that the server is quiescing and is unable to
// process new work.
var ErrUnavailable = errors.New("node unavailable; try another peer")

type Stopper struct {
	quiescer chan struct{} // Closed when quiescing
	stopped  chan struct{} // Closed when stopped completely

	mu struct {
		sync.RWMutex
		_numTasks int32
		quiescing bool
		stopping  bool
		closers   []Closer
	}
}

func NewStopper() *Stopper {
	return &Stopper{quiescer: make(chan struct{}), stopped: make(chan struct{})}
}

// AddCloser adds an object to close after the stopper has been stopped.
func (s *Stopper) AddCloser(c Closer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.stopping {
		c.Close()
		return
	}
	s.mu.closers = append(s.mu.closers, c)
}

func (s *Stopper) addTask(delta int32) { atomic.AddInt32(&s.mu._numTasks, delta) }

// NumTasks returns the number of active tasks.
func (s *Stopper) NumTasks() int { return int(atomic.LoadInt32(&s.mu._numTasks)) }

func (s *Stopper) runPrelude() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.mu.quiescing {
		return false
	}
	// NB: we run this under the read lock to ensure that `refuseRLocked()` cannot
	// change until the task is registered.
	s.addTask(1)
	return true
}

func (s *Stopper) runPostlude() { s.addTask(-1) }

// RunAsyncTask is like RunTask, except the callback f is run in a goroutine.
func (s *Stopper) RunAsyncTask(ctx context.Context, taskName string, f func(context.Context)) error {
	if !s.runPrelude() {
		return ErrUnavailable
	}
	go func() {
		defer s.runPostlude()
		f(ctx)
	}()
	return nil
}

// Quiesce moves the stopper to state quiescing and waits until all tasks
// complete.
func (s *Stopper) Quiesce(ctx context.Context) {
	func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.mu.quiescing {
			s.mu.quiescing = true
			close(s.quiescer)
		}
	}()
	for s.NumTasks() > 0 {
		time.Sleep(5 * time.Millisecond)
	}
}

// Stop signals all live workers to stop and then waits for each to
// confirm it has stopped.
func (s *Stopper) Stop(ctx context.Context) {
	s.mu.Lock()
	stopCalled := s.mu.stopping
	s.mu.stopping = true
	s.mu.Unlock()
	if stopCalled {
		<-s.stopped
		return
	}
	defer close(s.stopped)

	s.Quiesce(ctx)

	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.mu.closers {
		c.Close()
	}
}

// ---- pkg/kv/kvserver ----

type Replica struct {
	RangeID int64
	store   *Store
	mu      struct {
		sync.RWMutex
		destroyed           bool
		pendingLeaseRequest pendingLeaseRequest
	}
}

type pendingLeaseRequest struct {
	repl         *Replica
	llHandles    map[int]struct{}
	cancelLocked func()
}

type Store struct {
	stopper  *Stopper
	replicas sync.Map // map[int64]*Replica
	cfg      StoreConfig
}

type StoreTestingKnobs struct {
	// LeaseRequestEvent is called when a lease is requested, with r.mu held.
	LeaseRequestEvent func(rangeID int64)
}

type StoreConfig struct{ TestingKnobs StoreTestingKnobs }

func (s *Store) Stopper() *Stopper { return s.stopper }

type storeReplicaVisitor struct {
	store *Store
}

// Visit calls the visitor with each Replica until false is returned.
func (rs *storeReplicaVisitor) Visit(visitor func(*Replica) bool) {
	var repls []*Replica
	rs.store.replicas.Range(func(_, v any) bool {
		repls = append(repls, v.(*Replica))
		return true
	})
	for _, repl := range repls {
		// TODO(tschottdorf): let the visitor figure out if something's been
		// destroyed once we return errors from mutexes (#9190).
		repl.mu.RLock()
		destroyed := repl.mu.destroyed
		repl.mu.RUnlock()
		if destroyed {
			continue
		}
		if !visitor(repl) {
			break
		}
	}
}

// VisitReplicas invokes the visitor on the Store's Replicas until the visitor
// returns false.
func (s *Store) VisitReplicas(visitor func(*Replica) (wantMore bool)) {
	v := &storeReplicaVisitor{store: s}
	v.Visit(visitor)
}

// processRaft registers the closer added in #61279: on shutdown, abandon the
// proposals of every replica.
func (s *Store) processRaft(ctx context.Context) {
	s.stopper.AddCloser(CloserFn(func() {
		s.VisitReplicas(func(r *Replica) bool {
			return true
		})
	}))
}

// InitOrJoinRequest executes a RequestLease command asynchronously. It
// requires that r.mu is held.
func (p *pendingLeaseRequest) InitOrJoinRequest(ctx context.Context) error {
	// No request in progress. Let's propose a Lease command asynchronously.
	if err := p.repl.store.Stopper().RunAsyncTask(ctx, "storage.pendingLeaseRequest: requesting lease",
		func(ctx context.Context) {
			// Send the RequestLeaseRequest or TransferLeaseRequest...
		}); err != nil {
		p.llHandles = nil
		return err
	}
	return nil
}

// requestLeaseLocked executes a request to obtain or extend a lease
// asynchronously. Requires that r.mu is held.
func (r *Replica) requestLeaseLocked(ctx context.Context) error {
	if fn := r.store.cfg.TestingKnobs.LeaseRequestEvent; fn != nil {
		fn(r.RangeID)
	}
	return r.mu.pendingLeaseRequest.InitOrJoinRequest(ctx)
}

func (r *Replica) redirectOnOrAcquireLease(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requestLeaseLocked(ctx)
}

func main() {
	ctx := context.Background()
	leaseRequested := make(chan struct{})
	closersRunning := make(chan struct{})

	stopper := NewStopper()
	s := &Store{stopper: stopper}
	s.cfg.TestingKnobs.LeaseRequestEvent = func(int64) {
		close(leaseRequested)
		<-closersRunning
	}
	r := &Replica{RangeID: 1, store: s}
	r.mu.pendingLeaseRequest.repl = r
	s.replicas.Store(r.RangeID, r)

	// The server registers a first closer (stopping the raft scheduler) and
	// then the store's replica-visiting closer.
	stopper.AddCloser(CloserFn(func() { close(closersRunning) }))
	s.processRaft(ctx)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := r.redirectOnOrAcquireLease(ctx)
		fmt.Println("lease request:", err)
	}()
	<-leaseRequested

	stopper.Stop(ctx)
	wg.Wait()
	fmt.Println("stopped")
}
