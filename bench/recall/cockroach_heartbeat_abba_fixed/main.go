// cockroach pkg/storage: Store.sendQueuedHeartbeats holds coalescedMu while
// sending the coalesced heartbeats, and when a send fails it reports the peer
// unreachable through each replica, which takes Replica.raftMu. Meanwhile
// Replica.handleRaftReady holds raftMu and queues heartbeats through
// maybeCoalesceHeartbeat, which takes coalescedMu.
// cockroachdb/cockroach#10206, fixed in cockroachdb/cockroach#10214.
// Fixed twin: sendQueuedHeartbeats swaps out the queued heartbeats under
// coalescedMu and sends (and reports unreachable) after releasing it.
package main

import (
	"fmt"
	"sync"
)

type heartbeat struct{ rangeID, toStore int }

type Store struct {
	coalescedMu struct {
		sync.Mutex
		heartbeats map[int][]heartbeat // toStore -> queued beats
	}
	mu struct {
		sync.Mutex
		replicas map[int]*Replica
	}
	sendToStore func(toStore int, beats []heartbeat) bool
}

type Replica struct {
	rangeID     int
	store       *Store
	raftMu      sync.Mutex
	unreachable map[int]int // protected by raftMu
}

func (r *Replica) reportUnreachable(toStore int) {
	r.raftMu.Lock()
	defer r.raftMu.Unlock()
	r.unreachable[toStore]++
}

func (r *Replica) maybeCoalesceHeartbeat(toStore int) {
	s := r.store
	s.coalescedMu.Lock()
	s.coalescedMu.heartbeats[toStore] = append(s.coalescedMu.heartbeats[toStore], heartbeat{r.rangeID, toStore})
	s.coalescedMu.Unlock()
}

func (r *Replica) handleRaftReady() {
	r.raftMu.Lock()
	defer r.raftMu.Unlock()
	for _, to := range []int{2, 3} {
		r.maybeCoalesceHeartbeat(to)
	}
}

func (s *Store) sendQueuedHeartbeatsToNode(toStore int, beats []heartbeat) {
	if s.sendToStore(toStore, beats) {
		return
	}
	for _, hb := range beats {
		s.mu.Lock()
		r := s.mu.replicas[hb.rangeID]
		s.mu.Unlock()
		r.reportUnreachable(toStore)
	}
}

func (s *Store) sendQueuedHeartbeats() {
	s.coalescedMu.Lock()
	queued := s.coalescedMu.heartbeats
	s.coalescedMu.heartbeats = make(map[int][]heartbeat)
	s.coalescedMu.Unlock()

	for to, beats := range queued {
		s.sendQueuedHeartbeatsToNode(to, beats)
	}
}

func main() {
	s := &Store{sendToStore: func(toStore int, _ []heartbeat) bool { return toStore != 3 }}
	s.coalescedMu.heartbeats = make(map[int][]heartbeat)
	s.mu.replicas = make(map[int]*Replica)
	for id := 1; id <= 8; id++ {
		s.mu.replicas[id] = &Replica{rangeID: id, store: s, unreachable: make(map[int]int)}
	}

	var wg sync.WaitGroup
	// Raft scheduler workers processing ready replicas.
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20000; i++ {
				s.mu.Lock()
				r := s.mu.replicas[1+i%len(s.mu.replicas)]
				s.mu.Unlock()
				r.handleRaftReady()
			}
		}()
	}
	// coalescedHeartbeatsLoop.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 20000; i++ {
			s.sendQueuedHeartbeats()
		}
	}()
	wg.Wait()
	fmt.Println("heartbeat loops done")
}
