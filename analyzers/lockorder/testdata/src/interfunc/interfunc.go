package interfunc

import "sync"

type Store struct {
	mu    sync.Mutex
	index sync.RWMutex
}

// Across functions: put holds mu and calls reindex, which takes index.
func (s *Store) put() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reindex()
}

func (s *Store) reindex() {
	s.index.Lock()
	s.index.Unlock()
}

func (s *Store) lookup() {
	s.index.RLock()
	defer s.index.RUnlock()
	s.flush() // want `lock order inversion: Store.mu then Store.index in Store.put \(interfunc.go:12 -> interfunc.go:14 via Store.reindex\) but Store.index then Store.mu in Store.lookup \(interfunc.go:23 -> interfunc.go:25 via Store.flush\) \[lock-order\]`
}

func (s *Store) flush() {
	s.mu.Lock()
	s.mu.Unlock()
}

// Calling after the unlock adds no edge.
func (s *Store) quiet() {
	s.index.RLock()
	s.index.RUnlock()
	s.flush()
}
