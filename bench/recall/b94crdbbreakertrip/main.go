// Project: cockroachdb/cockroach (pkg/kv/kvserver/replica_circuit_breaker.go, replica_raft.go, pkg/util/circuit/circuitbreaker.go, pkg/util/stop/stopper.go), v22.1 development, early 2022 (approximate).
// Bug: when the replica's raft tick found a proposal stuck for longer than the slow replication threshold it tripped the per-replica circuit breaker synchronously while still holding r.mu, and replicaCircuitBreaker.tripSync builds the breaker error through replicaInCircuitBreaker.replicaUnavailableError, which reads r.Desc() and r.RaftStatus() under r.mu.RLock, so the tick goroutine deadlocked on its own replica mutex. The fix trips through TripAsync, which runs tripSync as a stopper task once r.mu has been released.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ---- pkg/util/stop ----

type Stopper struct {
	mu       sync.Mutex
	quiesced bool
	tasks    sync.WaitGroup
}

func (s *Stopper) RunAsyncTask(ctx context.Context, taskName string, f func(context.Context)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.quiesced {
		return errors.New("node unavailable; try another peer")
	}
	s.tasks.Add(1)
	go func() {
		defer s.tasks.Done()
		f(ctx)
	}()
	return nil
}

func (s *Stopper) Stop() {
	s.mu.Lock()
	s.quiesced = true
	s.mu.Unlock()
	s.tasks.Wait()
}

// ---- pkg/util/circuit ----

type EventHandler interface {
	OnTrip(b *Breaker, prev, cur error)
	OnReset(b *Breaker)
}

type Options struct {
	Name         string
	EventHandler EventHandler
}

type Breaker struct {
	mu struct {
		sync.RWMutex
		opts *Options
		err  error
	}
}

func NewBreaker(opts Options) *Breaker {
	b := &Breaker{}
	b.mu.opts = &opts
	return b
}

func (b *Breaker) Err() error { b.mu.RLock(); defer b.mu.RUnlock(); return b.mu.err }

func (b *Breaker) Report(err error) {
	b.mu.Lock()
	prev := b.mu.err
	b.mu.err = err
	h := b.mu.opts.EventHandler
	b.mu.Unlock()
	h.OnTrip(b, prev, err)
}

type EventLogger struct{ Log func(string) }

func (d *EventLogger) OnTrip(b *Breaker, prev, cur error) {
	d.Log(fmt.Sprintf("tripped with error: %v", cur))
}
func (d *EventLogger) OnReset(b *Breaker) { d.Log("breaker reset") }

// ---- pkg/kv/kvserver ----

type RangeDescriptor struct {
	RangeID  int64
	StartKey string
	EndKey   string
}

type RaftStatus struct {
	Lead, Term, Commit uint64
}

type replicaInCircuitBreaker interface {
	Desc() *RangeDescriptor
	RaftStatus() *RaftStatus
	replicaUnavailableError(err error) error
}

type replicaCircuitBreaker struct {
	stopper *Stopper
	r       replicaInCircuitBreaker
	wrapped *Breaker
}

func newReplicaCircuitBreaker(stopper *Stopper, r replicaInCircuitBreaker) *replicaCircuitBreaker {
	return &replicaCircuitBreaker{stopper: stopper, r: r, wrapped: NewBreaker(Options{
		Name:         "breaker",
		EventHandler: &EventLogger{Log: func(s string) { fmt.Println("circuit breaker:", s) }},
	})}
}

func (br *replicaCircuitBreaker) TripAsync(err error) {
	_ = br.stopper.RunAsyncTask(context.Background(), "trip-breaker", func(ctx context.Context) {
		br.tripSync(err)
	})
}

func (br *replicaCircuitBreaker) tripSync(err error) {
	br.wrapped.Report(br.r.replicaUnavailableError(err))
}

type ProposalData struct {
	idKey          string
	createdAtTicks int
}

type Store struct {
	StoreID int
	stopper *Stopper
}

type Replica struct {
	RangeID int64
	store   *Store
	breaker *replicaCircuitBreaker
	mu      struct {
		sync.RWMutex
		desc       *RangeDescriptor
		raftStatus RaftStatus
		ticks      int
		proposals  map[string]*ProposalData
	}
}

func (r *Replica) Desc() *RangeDescriptor { r.mu.RLock(); defer r.mu.RUnlock(); return r.mu.desc }

func (r *Replica) RaftStatus() *RaftStatus {
	r.mu.RLock()
	defer r.mu.RUnlock()
	st := r.mu.raftStatus
	return &st
}

func (r *Replica) replicaUnavailableError(err error) error {
	desc := r.Desc()
	st := r.RaftStatus()
	return fmt.Errorf("replica r%d:[%s,%s) of s%d unavailable (lead=%d term=%d commit=%d): %w",
		desc.RangeID, desc.StartKey, desc.EndKey, r.store.StoreID, st.Lead, st.Term, st.Commit, err)
}

const slowReplicationThresholdTicks = 3

// tick is called by the raft scheduler on every raft tick.
func (r *Replica) tick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.ticks++
	r.refreshProposalsLocked()
}

func (r *Replica) refreshProposalsLocked() {
	for _, p := range r.mu.proposals {
		if r.mu.ticks-p.createdAtTicks >= slowReplicationThresholdTicks {
			err := fmt.Errorf("proposal %s has been waiting %d ticks", p.idKey, r.mu.ticks-p.createdAtTicks)
			r.breaker.tripSync(err)
			delete(r.mu.proposals, p.idKey)
		}
	}
}

func main() {
	s := &Store{StoreID: 1, stopper: &Stopper{}}
	r := &Replica{RangeID: 42, store: s}
	r.mu.desc = &RangeDescriptor{RangeID: 42, StartKey: "/Table/53", EndKey: "/Table/54"}
	r.mu.raftStatus = RaftStatus{Lead: 2, Term: 7, Commit: 1000}
	r.mu.proposals = map[string]*ProposalData{"6f2a1c": {idKey: "6f2a1c", createdAtTicks: 0}}
	r.breaker = newReplicaCircuitBreaker(s.stopper, r)

	// Quorum is lost: the proposal never applies, and the raft scheduler keeps ticking.
	for i := 0; i < 5; i++ {
		r.tick()
	}
	s.stopper.Stop()
	fmt.Println("breaker error:", r.breaker.wrapped.Err())
}
