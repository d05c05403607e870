package leak

import (
	"errors"
	"sync"
)

// A lock table: lock finds or makes a key's entry and takes its lock,
// returning nil, or an error before taking anything; unlock finds the
// entry again and lets it go. The lock goes with lock's success.
type entry struct {
	sync.RWMutex
	refs int
}

type table struct {
	mu      sync.Mutex
	entries map[string]*entry
	closed  bool
}

var errClosed = errors.New("table closed")

// lock: silent.
func (t *table) lock(key string, read bool) error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return errClosed
	}
	e, ok := t.entries[key]
	if !ok {
		e = &entry{}
		t.entries[key] = e
	}
	e.refs++
	t.mu.Unlock()
	if read {
		e.RLock()
	} else {
		e.Lock()
	}
	return nil
}

func (t *table) unlock(key string, read bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entries[key]
	if !ok {
		return
	}
	if read {
		e.RUnlock()
	} else {
		e.Unlock()
	}
	if e.refs--; e.refs == 0 {
		delete(t.entries, key)
	}
}

// tryLock fails after taking the entry's lock on one path: held on a
// failure return too.
func (t *table) tryLock(key string) error { // want `the function returns with different locks held on different paths: entry.RWMutex \(taken at locktable.go:\d+\) held on some return paths only \[inconsistent-return\]`
	t.mu.Lock()
	e, ok := t.entries[key]
	t.mu.Unlock()
	if !ok {
		return errors.New("no entry")
	}
	e.Lock()
	if e.refs == 0 {
		return errors.New("stale entry")
	}
	return nil
}
