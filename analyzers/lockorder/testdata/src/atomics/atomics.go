package atomics

import (
	"sync"
	"sync/atomic"
)

type Stats struct {
	mu    sync.Mutex
	hits  int64        //confined:atomic
	total atomic.Int64 //confined:atomic
	// Both: reads atomic or locked, writes atomic and locked.
	//confined:atomic
	//confined:guardedby mu
	both int64
}

func (s *Stats) ok() int64 {
	atomic.AddInt64(&s.hits, 1)
	s.total.Add(1)
	return atomic.LoadInt64(&s.hits) + s.total.Load()
}

func (s *Stats) bad() int64 {
	s.hits++      // want `Stats.hits is declared atomic but accessed without sync/atomic \[atomic\]`
	return s.hits // want `Stats.hits is declared atomic but accessed without sync/atomic \[atomic\]`
}

func (s *Stats) both1() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.both // silent: a locked plain read
	atomic.StoreInt64(&s.both, v+1)
	return atomic.LoadInt64(&s.both)
}

func (s *Stats) bothRead() int64 {
	return atomic.LoadInt64(&s.both) // silent: an atomic read needs no lock
}

func (s *Stats) bothBad() {
	atomic.AddInt64(&s.both, 1) // want `write to Stats.both without holding Stats.mu \[guardedby\]`
	s.mu.Lock()
	s.both = 2 // want `Stats.both is declared atomic but accessed without sync/atomic \[atomic\]`
	s.mu.Unlock()
}
