package callbackonce

import "sync"

// A Do under a lock its function takes deadlocks the first time it runs:
// the once has not run yet, and the function waits for the lock its own
// goroutine holds.
type Store struct {
	mu          sync.Mutex
	metricsOnce sync.Once
	metrics     map[string]int
	ranges      int
}

func (s *Store) initMetrics() {
	s.mu.Lock()
	s.metrics = map[string]int{"ranges": s.ranges}
	s.mu.Unlock()
}

func (s *Store) ComputeMetrics() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.metricsOnce.Do(s.initMetrics) // want `Store.mu locked again by sync.Once.Do -> Store.initMetrics \(at relock.go:16\) while held since relock.go:22: self-deadlock \[double-lock\]`
	s.metrics["ranges"] = s.ranges
}

// Correct: the once runs before the lock is taken.
func (s *Store) Metrics() int {
	s.metricsOnce.Do(s.initMetrics)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.metrics["ranges"]
}
