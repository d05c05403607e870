package perkey

import (
	"errors"
	"sync"
)

// NameLocks keeps one wrapper per name; Lock looks the wrapper up under
// mu, lets mu go and locks the wrapper through its own method, so the
// element lock is taken by a call, not by a Lock on the element.
// Unlock fails, releasing nothing, for a name never locked.
type NameLocks struct {
	mu    sync.Mutex
	locks map[string]*nameLock
}

type nameLock struct {
	mu      sync.Mutex
	waiters int
}

func (n *nameLock) lock()   { n.mu.Lock() }
func (n *nameLock) unlock() { n.mu.Unlock() }

func (l *NameLocks) Lock(name string) {
	l.mu.Lock()
	n, ok := l.locks[name]
	if !ok {
		n = &nameLock{}
		l.locks[name] = n
	}
	n.waiters++
	l.mu.Unlock()
	n.lock()
	l.mu.Lock()
	n.waiters--
	l.mu.Unlock()
}

func (l *NameLocks) Unlock(name string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, ok := l.locks[name]
	if !ok {
		return errors.New("not locked")
	}
	if n.waiters == 0 {
		delete(l.locks, name)
	}
	n.unlock()
	return nil
}

type Task struct {
	sync.Mutex
	running bool
}

type Runtime struct {
	names NameLocks
	tasks map[string]*Task
}

// exited holds the task's name lock while it marks the task stopped.
// The name lock is released on every return (Unlock's failure releases
// nothing because there is nothing to release): no leak.
func (r *Runtime) exited(id string) {
	r.names.Lock(id)
	defer r.names.Unlock(id)
	t := r.tasks[id]
	t.Lock()
	t.running = false
	t.Unlock()
}

// watch runs exited on its own goroutine, which ends with the name lock
// released.
func (r *Runtime) watch(id string) {
	go r.exited(id)
}

// stop holds the task while it signals it under the name lock.
func (r *Runtime) stop(t *Task, id string) {
	t.Lock()
	defer t.Unlock()
	r.names.Lock(id) // want `lock order inversion: nameLock.mu then Task.Mutex in Runtime.exited \(wrapped.go:68 -> wrapped.go:71\) but Task.Mutex then nameLock.mu in Runtime.stop \(wrapped.go:84 -> wrapped.go:86 via NameLocks.Lock -> nameLock.lock\) \[lock-order\]`
	r.names.Unlock(id)
}

// stopped takes the name lock only after the task's lock is let go.
func (r *Runtime) stopped(t *Task, id string) {
	t.Lock()
	running := t.running
	t.Unlock()
	if running {
		r.names.Lock(id)
		r.names.Unlock(id)
	}
}
