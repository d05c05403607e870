// Modeled on etcd's mvcc watchableStore/store lock dance: syncWatchers takes
// the store's revMu and then the watchableStore mu (the same order the write
// path uses: store.revMu -> notify -> s.mu), but a helper that waits for a
// pending compaction temporarily releases and re-acquires revMu while the
// caller still holds s.mu. During the window a writer takes revMu and blocks
// on s.mu, and the re-lock of revMu then blocks forever.
package main

import (
	"sync"
	"time"
)

type store struct {
	revMu      sync.RWMutex
	currentRev int64
	compactC   chan struct{}
}

// waitCompaction must be called with revMu held; it releases it while
// waiting for the compactor and re-acquires it before returning.
func (st *store) waitCompaction() {
	st.revMu.Unlock()
	select {
	case <-st.compactC:
	case <-time.After(time.Millisecond):
	}
	st.revMu.Lock()
}

type watchableStore struct {
	store    *store
	mu       sync.RWMutex
	unsynced map[int64]int64
	synced   map[int64]int64
}

func (s *watchableStore) syncWatchers() {
	s.store.revMu.Lock()
	defer s.store.revMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.store.waitCompaction()
	for id, rev := range s.unsynced {
		if rev <= s.store.currentRev {
			s.synced[id] = rev
			delete(s.unsynced, id)
		}
	}
}

func (s *watchableStore) notify(rev int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id := range s.synced {
		s.synced[id] = rev
	}
}

// End finishes a write txn: bump the revision and notify watchers.
func (s *watchableStore) End() {
	s.store.revMu.Lock()
	defer s.store.revMu.Unlock()
	s.store.currentRev++
	s.notify(s.store.currentRev)
}

func main() {
	s := &watchableStore{
		store:    &store{compactC: make(chan struct{})},
		unsynced: map[int64]int64{1: 0, 2: 5},
		synced:   map[int64]int64{},
	}
	go func() { // syncWatchersLoop
		for i := 0; i < 50; i++ {
			s.syncWatchers()
		}
	}()
	go func() { // put requests
		for i := 0; i < 50; i++ {
			s.End()
		}
	}()
	time.Sleep(100 * time.Millisecond)
}
