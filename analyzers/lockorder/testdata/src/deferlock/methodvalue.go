package deferlock

import "sync"

// An unlock taken as a method value and called later (`unlock :=
// mu.RUnlock; defer unlock()`) releases the lock, also when the value is
// Unlock on one branch and RUnlock on the other (gVisor's ReadToBlocks
// picks the lock mode first).
type table struct {
	mu   sync.RWMutex
	rows []int //confined:guardedby mu
}

func (t *table) read(exclusive bool) int {
	var unlock func()
	if exclusive {
		t.mu.Lock()
		unlock = t.mu.Unlock
	} else {
		t.mu.RLock()
		unlock = t.mu.RUnlock
	}
	defer unlock()
	return len(t.rows)
}

func (t *table) count() int {
	t.mu.RLock()
	unlock := t.mu.RUnlock
	defer unlock()
	return len(t.rows)
}

func (t *table) first() int {
	t.mu.RLock()
	unlock := t.mu.RUnlock
	if len(t.rows) == 0 {
		return 0 // want `table.mu taken at methodvalue.go:35 is still held on this return path \(other paths release it\) \[lock-leak\]`
	}
	unlock()
	return 1
}
