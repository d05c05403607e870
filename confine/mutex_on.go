//go:build confine || race

package confine

import "sync"

// A Mutex is a sync.Mutex whose lock order is validated in this build; see
// the package documentation. The zero value is an unlocked mutex of a class
// of its own, named after the call site of its first Lock.
//
// A Mutex must not be copied after first use.
type Mutex struct {
	mu    sync.Mutex
	order lockState
}

// NewMutex returns an unlocked Mutex of the named lock class, such as
// "consumer.commitMu". Mutexes with the same class name share one place in
// the lock order. An empty name behaves like the zero value.
func NewMutex(class string) *Mutex {
	m := new(Mutex)
	m.order.setClass(class)
	return m
}

// Lock locks m, first reporting a lock-order inversion or a recursive lock.
func (m *Mutex) Lock() {
	m.order.willLock("Lock")
	m.mu.Lock()
	m.order.locked()
}

// TryLock tries to lock m. It never blocks, so it cannot deadlock and is not
// order-checked; once it succeeds, m counts as held.
func (m *Mutex) TryLock() bool {
	if !m.mu.TryLock() {
		return false
	}
	m.order.locked()
	return true
}

// Unlock unlocks m.
func (m *Mutex) Unlock() {
	m.order.unlocking()
	m.mu.Unlock()
}

// An RWMutex is a sync.RWMutex whose lock order is validated in this build.
// Read and write locks order alike: a reader can block behind a waiting
// writer, so a read-lock inversion can deadlock too. The zero value is an
// unlocked mutex of a class of its own, named after the call site of its
// first lock.
//
// An RWMutex must not be copied after first use.
type RWMutex struct {
	mu    sync.RWMutex
	order lockState
}

// NewRWMutex returns an unlocked RWMutex of the named lock class.
func NewRWMutex(class string) *RWMutex {
	m := new(RWMutex)
	m.order.setClass(class)
	return m
}

// Lock locks m for writing.
func (m *RWMutex) Lock() {
	m.order.willLock("Lock")
	m.mu.Lock()
	m.order.locked()
}

// TryLock tries to lock m for writing without blocking.
func (m *RWMutex) TryLock() bool {
	if !m.mu.TryLock() {
		return false
	}
	m.order.locked()
	return true
}

// Unlock unlocks m for writing.
func (m *RWMutex) Unlock() {
	m.order.unlocking()
	m.mu.Unlock()
}

// RLock locks m for reading.
func (m *RWMutex) RLock() {
	m.order.willLock("RLock")
	m.mu.RLock()
	m.order.locked()
}

// TryRLock tries to lock m for reading without blocking.
func (m *RWMutex) TryRLock() bool {
	if !m.mu.TryRLock() {
		return false
	}
	m.order.locked()
	return true
}

// RUnlock undoes one RLock.
func (m *RWMutex) RUnlock() {
	m.order.unlocking()
	m.mu.RUnlock()
}

// RLocker returns a sync.Locker that read-locks m.
func (m *RWMutex) RLocker() sync.Locker { return (*readLocker)(m) }

type readLocker RWMutex

func (r *readLocker) Lock()   { (*RWMutex)(r).RLock() }
func (r *readLocker) Unlock() { (*RWMutex)(r).RUnlock() }
