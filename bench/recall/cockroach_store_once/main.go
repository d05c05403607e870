// Project: cockroach (pkg/kv/kvserver/store.go)
// Bug: Store.ComputeMetrics held s.mu while lazily initializing the metrics
// registry through s.metricsOnce.Do(s.initMetrics); initMetrics walks the
// replica map and takes s.mu itself. The first metrics tick (from the
// goroutine started by NewStore) deadlocks on s.mu inside the Once.
package main

import (
	"sync"
	"time"
)

type RangeID int64

type Replica struct {
	RangeID RangeID
	mu      sync.Mutex
	keys    int64
}

func (r *Replica) stats() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.keys
}

type StoreMetrics struct {
	ReplicaCount int64
	KeyCount     int64
	perRange     map[RangeID]int64
}

type Store struct {
	mu struct {
		sync.RWMutex
		replicas map[RangeID]*Replica
	}
	metricsOnce sync.Once
	metrics     *StoreMetrics
	stopper     chan struct{}
}

func NewStore() *Store {
	s := &Store{stopper: make(chan struct{})}
	s.mu.replicas = map[RangeID]*Replica{1: {RangeID: 1}, 2: {RangeID: 2}}
	go s.startMetricsLoop(10 * time.Millisecond)
	return s
}

func (s *Store) startMetricsLoop(interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			s.ComputeMetrics()
		case <-s.stopper:
			return
		}
	}
}

func (s *Store) initMetrics() {
	m := &StoreMetrics{perRange: map[RangeID]int64{}}
	s.mu.Lock()
	for id := range s.mu.replicas {
		m.perRange[id] = 0
	}
	s.mu.Unlock()
	s.metrics = m
}

// ComputeMetrics refreshes the store's metrics from its replicas.
func (s *Store) ComputeMetrics() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.metricsOnce.Do(s.initMetrics)
	var keys int64
	for id, r := range s.mu.replicas {
		n := r.stats()
		s.metrics.perRange[id] = n
		keys += n
	}
	s.metrics.ReplicaCount = int64(len(s.mu.replicas))
	s.metrics.KeyCount = keys
}

func main() {
	s := NewStore()
	time.Sleep(time.Second)
	close(s.stopper)
}
