package branches

import "sync"

// Lock helpers that are closures over a flag (nats-server's filestore:
// `fsLock := func() { if needFSLock { fs.mu.Lock() } }`): a call passing
// a constant for the flag locks or not for sure, and the closures are
// helpers, whose own conditional returns are no finding.

type Store struct {
	mu   sync.Mutex
	msgs int
}

func (s *Store) remove(seq int, needLock bool) bool {
	lock := func() {
		if needLock {
			s.mu.Lock()
		}
	}
	unlock := func() {
		if needLock {
			s.mu.Unlock()
		}
	}
	lock()
	defer unlock()
	if seq > s.msgs {
		return false
	}
	s.msgs--
	return true
}

// Remove takes the lock itself.
func (s *Store) Remove(seq int) bool { return s.remove(seq, true) }

// removeLocked runs under the caller's lock.
func (s *Store) removeLocked(seq int) bool { return s.remove(seq, false) }

func (s *Store) enforce(limit int) {
	for s.msgs > limit {
		if !s.removeLocked(s.msgs) {
			return
		}
	}
}

// Update holds the lock around removeLocked, and unlocks once on every
// path. Silent.
func (s *Store) Update(limit int) error {
	s.mu.Lock()
	if limit < 0 {
		s.mu.Unlock()
		return nil
	}
	s.enforce(limit)
	s.mu.Unlock()
	return nil
}

// Trim calls the locking form with the lock held.
func (s *Store) Trim(seq int) {
	s.mu.Lock()
	s.Remove(seq) // want `Store.mu locked again by Store.Remove -> Store.remove -> Store.remove.func1 \(at flagclosure.go:\d+\) while held since flagclosure.go:\d+: self-deadlock \[double-lock\]`
	s.mu.Unlock()
}

// subscribe takes a second lock only for queue subscriptions, through
// closures over a flag computed here. Silent.
func (s *Store) subscribe(queue string, other *sync.Mutex) {
	isq := len(queue) > 0
	lockAll := func() {
		if isq {
			other.Lock()
		}
		s.mu.Lock()
	}
	unlockAll := func() {
		s.mu.Unlock()
		if isq {
			other.Unlock()
		}
	}
	lockAll()
	s.msgs++
	unlockAll()
}
