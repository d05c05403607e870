// Package locker provides per-name mutexes (github.com/moby/locker).
package locker

import "sync"

// Locker provides a lock per name, created on demand.
type Locker struct {
	mu    sync.Mutex
	locks map[string]*lockCtr
}

type lockCtr struct {
	mu      sync.Mutex
	waiters int
}

func New() *Locker { return &Locker{locks: make(map[string]*lockCtr)} }

// Lock locks the mutex for name, creating it if needed.
func (l *Locker) Lock(name string) {
	l.mu.Lock()
	nameLock, exists := l.locks[name]
	if !exists {
		nameLock = &lockCtr{}
		l.locks[name] = nameLock
	}
	nameLock.waiters++
	l.mu.Unlock()

	nameLock.mu.Lock()

	l.mu.Lock()
	nameLock.waiters--
	l.mu.Unlock()
}

// Unlock unlocks the mutex for name.
func (l *Locker) Unlock(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	nameLock := l.locks[name]
	if nameLock.waiters == 0 {
		delete(l.locks, name)
	}
	nameLock.mu.Unlock()
}
