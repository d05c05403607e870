// Package checklocks_downgrade: DowngradeLock turns a held write lock into
// a read lock without letting go (gVisor's sync.RWMutex), as checklocks
// reads it: a function read-locked on entry that re-locks for writing and
// downgrades on the way out returns as it came (udp's
// prepareForWriteInner); writing after the downgrade needs the write lock.
package checklocks_downgrade

import "sync"

// RWMutex is a read-write lock that can be downgraded.
type RWMutex struct{ rw sync.RWMutex }

func (m *RWMutex) Lock()    { m.rw.Lock() }
func (m *RWMutex) Unlock()  { m.rw.Unlock() }
func (m *RWMutex) RLock()   { m.rw.RLock() }
func (m *RWMutex) RUnlock() { m.rw.RUnlock() }

// DowngradeLock atomically unlocks for writing and locks for reading.
func (m *RWMutex) DowngradeLock() {
	m.rw.Unlock()
	m.rw.RLock()
}

type endpoint struct {
	mu    RWMutex
	state int // +checklocks:mu
}

// +checklocksread:e.mu
func (e *endpoint) bindLocked() bool {
	if e.state != 0 {
		return false
	}
	e.mu.RUnlock()
	e.mu.Lock()
	defer e.mu.DowngradeLock()
	e.state = 1
	return true
}

// +checklocksread:e.mu
func (e *endpoint) writeAfterDowngrade() {
	e.mu.RUnlock()
	e.mu.Lock()
	e.state = 1
	e.mu.DowngradeLock()
	e.state = 2 // want `write to endpoint.state with endpoint.mu only read-locked \(since downgrade.go:\d+\): writes need Lock \[guardedby-write-shared\]`
}
