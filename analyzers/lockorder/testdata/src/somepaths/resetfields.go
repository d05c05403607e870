package somepaths

import "sync"

// A holder that resets some of its fields to constants before calling a
// helper whose branch tests something else (a compaction scheduled in
// the backend it reads): the reset rules nothing out, and the branch
// re-locks (etcd's Restore resuming a compaction). Where the helper tests
// the field reset, Clean (silent.go) stays silent.

type kvStore struct {
	mu             sync.Mutex
	currentRev     int64
	compactMainRev int64
	backend        map[string]int64
}

func (s *kvStore) Compact(rev int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rev <= s.compactMainRev {
		return
	}
	s.compactMainRev = rev
}

func (s *kvStore) restore() {
	scheduled := s.backend["scheduledCompactRev"]
	if scheduled != 0 {
		s.Compact(scheduled)
	}
}

func (s *kvStore) Restore(b map[string]int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.backend = b
	s.currentRev = 1
	s.compactMainRev = -1
	s.restore() // want `kvStore.mu locked again by kvStore.restore -> kvStore.Compact \(at resetfields.go:\d+, on the paths that call kvStore.Compact\) while held since resetfields.go:\d+: self-deadlock \[double-lock\]`
}
