// Project: etcd (lease/lessor.go) -- FIXED TWIN.
// Change: checkpointScheduledLeases releases le.mu before calling le.cp.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type LeaseID int64

type LeaseCheckpoint struct {
	ID           LeaseID
	RemainingTTL int64
}

type LeaseCheckpointRequest struct{ Checkpoints []*LeaseCheckpoint }

// Checkpointer permits checkpointing of lease remaining TTLs to the consensus log.
type Checkpointer func(ctx context.Context, lc *LeaseCheckpointRequest)

type Lease struct {
	ID           LeaseID
	ttl          int64
	remainingTTL int64
}

type lessor struct {
	mu       sync.RWMutex
	leaseMap map[LeaseID]*Lease
	cp       Checkpointer
	primary  bool
	stopC    chan struct{}
	doneC    chan struct{}
}

func (le *lessor) SetCheckpointer(cp Checkpointer) {
	le.mu.Lock()
	defer le.mu.Unlock()
	le.cp = cp
}

// Checkpoint is called by the apply loop when a checkpoint entry commits.
func (le *lessor) Checkpoint(id LeaseID, remainingTTL int64) error {
	le.mu.Lock()
	defer le.mu.Unlock()
	if l, ok := le.leaseMap[id]; ok {
		l.remainingTTL = remainingTTL
	}
	return nil
}

func (le *lessor) findDueScheduledCheckpoints() []*LeaseCheckpoint {
	var cps []*LeaseCheckpoint
	for id, l := range le.leaseMap {
		cps = append(cps, &LeaseCheckpoint{ID: id, RemainingTTL: l.ttl - 1})
	}
	return cps
}

func (le *lessor) checkpointScheduledLeases() {
	var cps []*LeaseCheckpoint
	le.mu.Lock()
	if le.primary {
		cps = le.findDueScheduledCheckpoints()
	}
	cp := le.cp
	le.mu.Unlock()
	if len(cps) != 0 && cp != nil {
		cp(context.Background(), &LeaseCheckpointRequest{Checkpoints: cps})
	}
}

func (le *lessor) runLoop() {
	defer close(le.doneC)
	for {
		le.checkpointScheduledLeases()
		select {
		case <-time.After(20 * time.Millisecond):
		case <-le.stopC:
			return
		}
	}
}

func (le *lessor) Stop() { close(le.stopC); <-le.doneC }

// EtcdServer is a toy stand-in: proposals go to applyC and are acknowledged
// by the apply goroutine once applied.
type EtcdServer struct {
	lessor *lessor
	applyC chan proposal
}

type proposal struct {
	req  *LeaseCheckpointRequest
	done chan struct{}
}

func (s *EtcdServer) raftRequestOnce(ctx context.Context, r *LeaseCheckpointRequest) {
	p := proposal{req: r, done: make(chan struct{})}
	s.applyC <- p
	<-p.done
}

func (s *EtcdServer) applyAll() {
	for p := range s.applyC {
		for _, c := range p.req.Checkpoints {
			s.lessor.Checkpoint(c.ID, c.RemainingTTL)
		}
		close(p.done)
	}
}

func main() {
	le := &lessor{leaseMap: map[LeaseID]*Lease{42: {ID: 42, ttl: 60}}, primary: true,
		stopC: make(chan struct{}), doneC: make(chan struct{})}
	s := &EtcdServer{lessor: le, applyC: make(chan proposal)}
	le.SetCheckpointer(func(ctx context.Context, cp *LeaseCheckpointRequest) {
		s.raftRequestOnce(ctx, cp)
	})
	go s.applyAll()
	go le.runLoop()

	time.Sleep(100 * time.Millisecond)
	le.Stop()
	le.mu.RLock()
	fmt.Println("lease 42 remaining TTL:", le.leaseMap[42].remainingTTL)
	le.mu.RUnlock()
}
