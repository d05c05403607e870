package subclass

import "sync"

// Store keeps two locks in anonymous struct fields, each embedding a
// Mutex: two lock classes, named by their fields.
type Store struct {
	coalescedMu struct {
		sync.Mutex
		pending int
	}
	flushMu struct {
		sync.Mutex
		last int
	}
}

// coalesce: coalescedMu, then flushMu.
func (s *Store) coalesce() {
	s.coalescedMu.Lock()
	defer s.coalescedMu.Unlock()
	s.flushMu.Lock()
	s.flushMu.last = s.coalescedMu.pending
	s.flushMu.Unlock()
}

// flush: flushMu, then coalescedMu.
func (s *Store) flush() {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.coalescedMu.Lock() // want `lock order inversion: Store.coalescedMu then Store.flushMu in Store.coalesce .* but Store.flushMu then Store.coalescedMu in Store.flush`
	s.coalescedMu.pending = 0
	s.coalescedMu.Unlock()
}

// Two anonymous structs in different types are different classes too.
type Other struct {
	mu struct{ sync.Mutex }
}

func (o *Other) both(s *Store) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s.coalescedMu.Lock()
	s.coalescedMu.Unlock()
}

var _ = []any{(*Store).coalesce, (*Store).flush, (*Other).both}
