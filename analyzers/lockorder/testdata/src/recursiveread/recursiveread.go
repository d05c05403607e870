// Package recursiveread: a recursive read lock deadlocks only behind a
// waiting writer. Production code always has one in waiting (any
// goroutine may call Put); a test has one only if a goroutine it starts
// write-locks.
package recursiveread

import "sync"

type Store struct {
	mu sync.RWMutex
	m  map[string]int
}

func (s *Store) Get(k string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.m[k]
}

func (s *Store) Put(k string, v int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[k] = v
}

func (s *Store) Peek(k string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.m[k]
}

// Sum read-locks, then Get read-locks again: Put may queue in between.
func (s *Store) Sum(keys []string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for _, k := range keys {
		n += s.Get(k) // want `RLock of Store.mu by Store.Get .* deadlocks behind a waiting writer`
	}
	return n
}
