package leak

import (
	"errors"
	"sync"
)

// A nil error returned with the lock held, where another nil return has
// let it go, is no acquire on success: that path forgot the unlock
// (nothing to merge, so the merge returns early).
type Merger struct {
	mu     sync.Mutex
	closed bool
	files  []string
}

var errMergerClosed = errors.New("closed")

func (m *Merger) doMerge() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return errMergerClosed
	}
	if len(m.files) == 0 {
		return nil // want `Merger.mu taken at successleak.go:\d+ is still held on this return path \(other paths release it\) \[lock-leak\]`
	}
	m.files = m.files[:0]
	m.mu.Unlock()
	return nil
}

// Held on every success return, released on the failures: an acquire on
// success, the caller's to release. Silent.
func (m *Merger) lockOpen() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return errMergerClosed
	}
	return nil
}

func (m *Merger) Add(f string) error {
	if err := m.lockOpen(); err != nil {
		return err
	}
	m.files = append(m.files, f)
	m.mu.Unlock()
	return nil
}
