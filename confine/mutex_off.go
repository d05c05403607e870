//go:build !confine && !race

package confine

import "sync"

// In this build Mutex and RWMutex forward to their sync counterparts
// through inlined methods: same size, same cost, no checks.

// A Mutex is a sync.Mutex whose lock order is validated when confine is
// enabled; see the package documentation. The zero value is an unlocked
// mutex.
//
// A Mutex must not be copied after first use.
type Mutex struct {
	mu sync.Mutex
}

// NewMutex returns an unlocked Mutex of the named lock class, such as
// "consumer.commitMu". The class is unused in this build.
func NewMutex(class string) *Mutex { return new(Mutex) }

// Lock locks m.
func (m *Mutex) Lock() { m.mu.Lock() }

// TryLock tries to lock m without blocking.
func (m *Mutex) TryLock() bool { return m.mu.TryLock() }

// Unlock unlocks m.
func (m *Mutex) Unlock() { m.mu.Unlock() }

// An RWMutex is a sync.RWMutex whose lock order is validated when confine
// is enabled. The zero value is an unlocked mutex.
//
// An RWMutex must not be copied after first use.
type RWMutex struct {
	mu sync.RWMutex
}

// NewRWMutex returns an unlocked RWMutex of the named lock class. The class
// is unused in this build.
func NewRWMutex(class string) *RWMutex { return new(RWMutex) }

// Lock locks m for writing.
func (m *RWMutex) Lock() { m.mu.Lock() }

// TryLock tries to lock m for writing without blocking.
func (m *RWMutex) TryLock() bool { return m.mu.TryLock() }

// Unlock unlocks m for writing.
func (m *RWMutex) Unlock() { m.mu.Unlock() }

// RLock locks m for reading.
func (m *RWMutex) RLock() { m.mu.RLock() }

// TryRLock tries to lock m for reading without blocking.
func (m *RWMutex) TryRLock() bool { return m.mu.TryRLock() }

// RUnlock undoes one RLock.
func (m *RWMutex) RUnlock() { m.mu.RUnlock() }

// RLocker returns a sync.Locker that read-locks m.
func (m *RWMutex) RLocker() sync.Locker { return m.mu.RLocker() }
