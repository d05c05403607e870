package backpointer

import "sync"

// A helper object made with a pointer to its owner's lock (vault's
// ExpirationManager: coreStateLock = &c.stateLock) takes that lock: a
// lock taken through the pointer field is the owner's, by path and by
// class. The owner read-locks, then reaches the helper, which
// read-locks again: a recursive read lock that a waiting Seal turns
// into a deadlock.
type expiration struct {
	coreLock *sync.RWMutex
	leases   map[string]string
}

func (m *expiration) accessor(id string) string {
	m.coreLock.RLock()
	defer m.coreLock.RUnlock()
	return m.leases[id]
}

type core struct {
	stateLock sync.RWMutex
	sealed    bool
	exp       *expiration
}

func newCore() *core {
	c := &core{}
	c.exp = &expiration{coreLock: &c.stateLock, leases: map[string]string{}}
	return c
}

func (c *core) handle(id string) string {
	c.stateLock.RLock()
	defer c.stateLock.RUnlock()
	return c.exp.accessor(id) // want `RLock of core.stateLock by expiration.accessor \(at lockfield.go:\d+\) while already read-locked since lockfield.go:\d+`
}

func (c *core) seal() {
	c.stateLock.Lock()
	defer c.stateLock.Unlock()
	c.sealed = true
}

// A helper made with a mutex of its own is no alias of its owner's
// lock: taking it under the owner's lock is no re-lock.
type revoker struct {
	mu     *sync.Mutex
	queued int
}

func (r *revoker) enqueue() {
	r.mu.Lock()
	r.queued++
	r.mu.Unlock()
}

type coreFixed struct {
	stateLock sync.RWMutex
	rev       *revoker
}

func newCoreFixed() *coreFixed {
	return &coreFixed{rev: &revoker{mu: &sync.Mutex{}}}
}

func (c *coreFixed) handle() {
	c.stateLock.RLock()
	defer c.stateLock.RUnlock()
	c.rev.enqueue()
}

func useLockField() {
	c := newCore()
	go c.seal()
	c.handle("a")
	newCoreFixed().handle()
}
