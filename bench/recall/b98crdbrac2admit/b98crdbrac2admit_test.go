// Project: cockroachdb/cockroach (pkg/kv/kvserver/kvflowcontrol/rac2: range_controller.go rangeController and RaftInterface, range_controller_test.go testingRCRange.admit and testingProbeToCloseTimerScheduler), v24.3 development, October 2024 (issue #133426, fixed by PR #133461 "rac2: fix TestRangeController testingRCRange.mu lock ordering"; the exact RaftInterface callback is approximate).
// Bug: once the RangeController tests took the ReplicaMutexAsserter's RaftMu around every *RaftMuLocked call, testingRCRange.admit held testingRCRange.mu while it locked RaftMu to call AdmitRaftMuLocked. The probe-to-close timer goroutine of testingProbeToCloseTimerScheduler locks RaftMu and calls HandleRaftEventRaftMuLocked, and the RangeController calls back into its RaftInterface, the testingRCRange, for follower state, which locks testingRCRange.mu, so the "admit" command and a firing close timer deadlock AB-BA. The fix reads what admit needs under r.mu, releases it, and only then takes RaftMu (RaftMu is ordered before testingRCRange.mu).
package b98crdbrac2admit

import (
	"context"
	"sync"
	"testing"
	"time"
)

type (
	RangeID   int64
	StoreID   int32
	ReplicaID int32
	StateType int
)

const (
	StateProbe StateType = iota
	StateReplicate
)

type ReplicaDescriptor struct {
	StoreID   StoreID
	ReplicaID ReplicaID
}

type ReplicaStateInfo struct {
	State       StateType
	Match, Next uint64
}

// ReplicaMutexAsserter carries the replica's raftMu and mu so the controller
// can assert (and tests can take) them.
type ReplicaMutexAsserter struct {
	RaftMu    *sync.Mutex
	ReplicaMu *sync.RWMutex
}

// RaftInterface is implemented by the replica (by testingRCRange in tests).
type RaftInterface interface {
	FollowerStateRaftMuLocked(replicaID ReplicaID) ReplicaStateInfo
	SendPingRaftMuLocked(replicaID ReplicaID) bool
}

type ProbeToCloseTimerScheduler interface {
	ScheduleSendStreamCloseRaftMuLocked(ctx context.Context, rangeID RangeID, delay time.Duration)
}

type RangeControllerOptions struct {
	RangeID              RangeID
	RaftInterface        RaftInterface
	CloseTimerScheduler  ProbeToCloseTimerScheduler
	ReplicaMutexAsserter ReplicaMutexAsserter
}

type AdmittedVector struct {
	Term     uint64
	Admitted [4]uint64
}

type RaftEvent struct{}

type replicaSendStream struct {
	mu struct {
		sync.Mutex
		probing  bool
		closed   bool
		admitted AdmittedVector
	}
}

type replicaState struct {
	desc       ReplicaDescriptor
	sendStream *replicaSendStream
}

type rangeController struct {
	opts       RangeControllerOptions
	replicaMap map[ReplicaID]*replicaState
}

func NewRangeController(opts RangeControllerOptions, replicas []ReplicaDescriptor) *rangeController {
	rc := &rangeController{opts: opts, replicaMap: make(map[ReplicaID]*replicaState)}
	for _, d := range replicas {
		rc.replicaMap[d.ReplicaID] = &replicaState{desc: d, sendStream: &replicaSendStream{}}
	}
	return rc
}

// HandleRaftEventRaftMuLocked requires raftMu. It asks the RaftInterface for
// each follower's state and schedules the close of streams stuck in probe.
func (rc *rangeController) HandleRaftEventRaftMuLocked(ctx context.Context, _ RaftEvent) error {
	for id, rs := range rc.replicaMap {
		info := rc.opts.RaftInterface.FollowerStateRaftMuLocked(id)
		rss := rs.sendStream
		rss.mu.Lock()
		switch {
		case info.State == StateProbe && !rss.mu.probing:
			rss.mu.probing = true
			rc.opts.CloseTimerScheduler.ScheduleSendStreamCloseRaftMuLocked(ctx, rc.opts.RangeID, time.Second)
		case info.State == StateProbe && rss.mu.probing:
			rss.mu.closed = true
		}
		rss.mu.Unlock()
	}
	return nil
}

func (rc *rangeController) AdmitRaftMuLocked(_ context.Context, replicaID ReplicaID, av AdmittedVector) {
	rs, ok := rc.replicaMap[replicaID]
	if !ok {
		return
	}
	rs.sendStream.mu.Lock()
	rs.sendStream.mu.admitted = av
	rs.sendStream.mu.Unlock()
}

// ---- range_controller_test.go ----

type testingReplica struct {
	desc ReplicaDescriptor
	info ReplicaStateInfo
}

type testingRange struct {
	rangeID    RangeID
	replicaSet map[ReplicaID]testingReplica
}

type testingRCRange struct {
	rc *rangeController
	mu struct {
		sync.Mutex
		r testingRange
	}
}

func (r *testingRCRange) FollowerStateRaftMuLocked(replicaID ReplicaID) ReplicaStateInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.r.replicaSet[replicaID].info
}

func (r *testingRCRange) SendPingRaftMuLocked(ReplicaID) bool { return false }

func (r *testingRCRange) admit(ctx context.Context, storeID StoreID, av AdmittedVector) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, replica := range r.mu.r.replicaSet {
		if replica.desc.StoreID == storeID {
			r.rc.opts.ReplicaMutexAsserter.RaftMu.Lock()
			defer r.rc.opts.ReplicaMutexAsserter.RaftMu.Unlock()
			r.rc.AdmitRaftMuLocked(ctx, replica.desc.ReplicaID, av)
			return
		}
	}
}

type testingRCState struct {
	ranges map[RangeID]*testingRCRange
	tick   chan struct{} // stands in for the manual time source firing timers
	timers sync.WaitGroup
	// afterTimerRaftMuLocked orders the firing timer against the next command.
	afterTimerRaftMuLocked func()
}

type testingProbeToCloseTimerScheduler struct{ state *testingRCState }

func (t *testingProbeToCloseTimerScheduler) ScheduleSendStreamCloseRaftMuLocked(
	ctx context.Context, rangeID RangeID, _ time.Duration,
) {
	t.state.timers.Add(1)
	go func() {
		defer t.state.timers.Done()
		<-t.state.tick
		r := t.state.ranges[rangeID]
		r.rc.opts.ReplicaMutexAsserter.RaftMu.Lock()
		defer r.rc.opts.ReplicaMutexAsserter.RaftMu.Unlock()
		t.state.afterTimerRaftMuLocked()
		_ = r.rc.HandleRaftEventRaftMuLocked(ctx, RaftEvent{})
	}()
}

func TestB98crdbrac2admit(t *testing.T) {
	ctx := context.Background()
	raftHeld, admitIssued := make(chan struct{}), make(chan struct{})
	state := &testingRCState{ranges: make(map[RangeID]*testingRCRange), tick: make(chan struct{})}
	state.afterTimerRaftMuLocked = func() {
		close(raftHeld)
		<-admitIssued
		time.Sleep(50 * time.Millisecond)
	}

	// init: range 1 with the leader on s1 and a follower on s2 stuck in probe.
	testRC := &testingRCRange{}
	testRC.mu.r = testingRange{rangeID: 1, replicaSet: map[ReplicaID]testingReplica{
		1: {desc: ReplicaDescriptor{StoreID: 1, ReplicaID: 1}, info: ReplicaStateInfo{State: StateReplicate}},
		2: {desc: ReplicaDescriptor{StoreID: 2, ReplicaID: 2}, info: ReplicaStateInfo{State: StateProbe}},
	}}
	raftMu, replicaMu := &sync.Mutex{}, &sync.RWMutex{}
	testRC.rc = NewRangeController(RangeControllerOptions{
		RangeID:              1,
		RaftInterface:        testRC,
		CloseTimerScheduler:  &testingProbeToCloseTimerScheduler{state: state},
		ReplicaMutexAsserter: ReplicaMutexAsserter{RaftMu: raftMu, ReplicaMu: replicaMu},
	}, []ReplicaDescriptor{{StoreID: 1, ReplicaID: 1}, {StoreID: 2, ReplicaID: 2}})
	state.ranges[1] = testRC
	raftMu.Lock()
	_ = testRC.rc.HandleRaftEventRaftMuLocked(ctx, RaftEvent{})
	raftMu.Unlock()

	// tick: the probe-to-close timer fires.
	close(state.tick)
	<-raftHeld

	// admit: range_id=1 store_id=1 term=1 to_index=5 pri=NormalPri
	close(admitIssued)
	av := AdmittedVector{Term: 1}
	av.Admitted[2] = 5
	testRC.admit(ctx, 1, av)

	state.timers.Wait()
	rss := testRC.rc.replicaMap[1].sendStream
	rss.mu.Lock()
	defer rss.mu.Unlock()
	if rss.mu.admitted != av {
		t.Fatalf("admitted = %+v, want %+v", rss.mu.admitted, av)
	}
}
