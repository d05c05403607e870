// Package main models hashicorp/raft's in-memory log store together with the
// log compaction performed after a snapshot (raft/snapshot.go compactLogs and
// inmem_store.go). The compactor loop takes the store lock at the top of each
// turn; when it reaches the trailing-logs boundary it breaks out while still
// holding the lock, records that in a flag, updates the low index, and the
// lock is released exactly once after the loop.
package main

import (
	"fmt"
	"sync"
)

type logEntry struct {
	index uint64
	term  uint64
	data  []byte
}

type inmemStore struct {
	mu        sync.RWMutex
	lowIndex  uint64
	highIndex uint64
	logs      map[uint64]*logEntry
}

func newInmemStore() *inmemStore {
	return &inmemStore{logs: make(map[uint64]*logEntry)}
}

func (s *inmemStore) StoreLog(l *logEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logs[l.index] = l
	if s.lowIndex == 0 {
		s.lowIndex = l.index
	}
	if l.index > s.highIndex {
		s.highIndex = l.index
	}
}

func (s *inmemStore) Bounds() (uint64, uint64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.lowIndex, s.highIndex
}

// compactLogs deletes entries up to snapshotIndex, but always keeps the last
// `trailing` entries. Deletion happens one entry per turn so that appenders
// are not starved.
func (s *inmemStore) compactLogs(snapshotIndex, trailing uint64) int {
	removed := 0
	locked := false
	for {
		s.mu.Lock()
		var maxDelete uint64
		if s.highIndex > trailing {
			maxDelete = s.highIndex - trailing
		}
		if snapshotIndex < maxDelete {
			maxDelete = snapshotIndex
		}
		if s.lowIndex == 0 || s.lowIndex > maxDelete {
			locked = true
			break // leave with s.mu held, fixed up below
		}
		delete(s.logs, s.lowIndex)
		s.lowIndex++
		removed++
		s.mu.Unlock()
	}
	if locked {
		// normalise lowIndex if the store was emptied
		if len(s.logs) == 0 {
			s.lowIndex, s.highIndex = 0, 0
		}
		s.mu.Unlock()
	}
	return removed
}

func main() {
	store := newInmemStore()
	for i := uint64(1); i <= 100; i++ {
		store.StoreLog(&logEntry{index: i, term: 1})
	}

	var wg sync.WaitGroup
	// leader appends new entries
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := uint64(101); i <= 400; i++ {
			store.StoreLog(&logEntry{index: i, term: 2, data: []byte("cmd")})
		}
	}()
	// snapshotter compacts periodically
	wg.Add(1)
	go func() {
		defer wg.Done()
		for snap := uint64(50); snap <= 300; snap += 50 {
			store.compactLogs(snap, 20)
		}
	}()
	// followers / RPC handlers read bounds
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 200; n++ {
				lo, hi := store.Bounds()
				if lo > hi && hi != 0 {
					panic("bad bounds")
				}
			}
		}()
	}
	wg.Wait()

	store.compactLogs(300, 20)
	lo, hi := store.Bounds()
	fmt.Printf("after compaction: low=%d high=%d\n", lo, hi)
	if lo != 301 || hi != 400 {
		panic(fmt.Sprintf("unexpected bounds %d..%d", lo, hi))
	}
}
