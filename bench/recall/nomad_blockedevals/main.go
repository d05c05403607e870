// Project: nomad (nomad/blocked_evals.go, nomad/leader.go)
// Bug: BlockedEvals.SetEnabled takes b.l and returns on the "already in that state" no-op
//   path without unlocking; when leadership is established twice, the leaked lock makes the
//   next Block from the FSM (or Stats) deadlock. PeriodicDispatch.SetEnabled had the same bug.
// Upstream fix: unlock before the no-op return (hashicorp/nomad #1231)

package main

import (
	"fmt"
	"sync"
)

type Evaluation struct {
	ID                   string
	JobID                string
	EscapedComputedClass bool
	ClassEligibility     map[string]bool
}

type BlockedStats struct {
	TotalEscaped int
	TotalBlocked int
}

type BlockedEvals struct {
	enabled bool
	stats   *BlockedStats
	l       sync.RWMutex

	captured map[string]*Evaluation
	escaped  map[string]*Evaluation
	jobs     map[string]struct{}

	capacityChangeCh chan string
	stopCh           chan struct{}
}

func NewBlockedEvals() *BlockedEvals {
	return &BlockedEvals{
		captured:         make(map[string]*Evaluation),
		escaped:          make(map[string]*Evaluation),
		jobs:             make(map[string]struct{}),
		capacityChangeCh: make(chan string, 8096),
		stopCh:           make(chan struct{}),
		stats:            new(BlockedStats),
	}
}

// Enabled is used to check if the broker is enabled.
func (b *BlockedEvals) Enabled() bool {
	b.l.RLock()
	defer b.l.RUnlock()
	return b.enabled
}

// SetEnabled is used to control if the blocked eval tracker is enabled. The
// tracker should only be enabled on the active leader.
func (b *BlockedEvals) SetEnabled(enabled bool) {
	b.l.Lock()
	if b.enabled == enabled {
		// No-op
		return
	} else if enabled {
		go b.watchCapacity()
	} else {
		close(b.stopCh)
	}
	b.enabled = enabled
	b.l.Unlock()
	if !enabled {
		b.Flush()
	}
}

// Block tracks the passed evaluation and enqueues it into the eval broker when
// a suitable node calls unblock.
func (b *BlockedEvals) Block(eval *Evaluation) {
	b.l.Lock()
	defer b.l.Unlock()

	// Do nothing if not enabled
	if !b.enabled {
		return
	}
	if _, ok := b.jobs[eval.JobID]; ok {
		return
	}
	b.jobs[eval.JobID] = struct{}{}
	b.stats.TotalBlocked++
	if eval.EscapedComputedClass {
		b.escaped[eval.ID] = eval
		b.stats.TotalEscaped++
		return
	}
	b.captured[eval.ID] = eval
}

// Unblock causes any evaluation that could potentially make progress on a
// capacity change on the passed computed node class to be enqueued.
func (b *BlockedEvals) Unblock(computedClass string) {
	b.l.RLock()
	enabled := b.enabled
	b.l.RUnlock()
	if !enabled {
		return
	}
	b.capacityChangeCh <- computedClass
}

func (b *BlockedEvals) watchCapacity() {
	for {
		select {
		case <-b.stopCh:
			return
		case computedClass := <-b.capacityChangeCh:
			b.unblock(computedClass)
		}
	}
}

func (b *BlockedEvals) unblock(computedClass string) {
	b.l.Lock()
	defer b.l.Unlock()
	for id, eval := range b.captured {
		if elig, ok := eval.ClassEligibility[computedClass]; ok && !elig {
			continue
		}
		delete(b.captured, id)
		delete(b.jobs, eval.JobID)
		b.stats.TotalBlocked--
	}
}

// Flush is used to empty the blocked evals and reset the tracker.
func (b *BlockedEvals) Flush() {
	b.l.Lock()
	defer b.l.Unlock()
	b.captured = make(map[string]*Evaluation)
	b.escaped = make(map[string]*Evaluation)
	b.jobs = make(map[string]struct{})
	b.stats = new(BlockedStats)
	b.stopCh = make(chan struct{})
}

// Stats is used to query the state of the blocked eval tracker.
func (b *BlockedEvals) Stats() BlockedStats {
	b.l.RLock()
	defer b.l.RUnlock()
	return *b.stats
}

type Server struct {
	blockedEvals *BlockedEvals
}

// establishLeadership is invoked once we become leader (and again on leader-loop restarts).
func (s *Server) establishLeadership() error {
	s.blockedEvals.SetEnabled(true)
	return nil
}

// applyUpdateEval is the FSM path for a failed placement that produced a blocked eval.
func (s *Server) applyUpdateEval(eval *Evaluation) {
	s.blockedEvals.Block(eval)
}

func main() {
	s := &Server{blockedEvals: NewBlockedEvals()}
	_ = s.establishLeadership()
	// leadership flaps: monitorLeadership re-runs establishLeadership without revoke
	_ = s.establishLeadership()

	s.applyUpdateEval(&Evaluation{ID: "e1", JobID: "cache", ClassEligibility: map[string]bool{"v1:123": true}})
	s.blockedEvals.Unblock("v1:123")
	fmt.Printf("blocked stats: %+v\n", s.blockedEvals.Stats())
}
