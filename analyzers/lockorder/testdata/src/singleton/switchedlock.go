package main

import "sync"

// A request path that read-locks the core's state only when asked to
// (`if doLocking { RLock; defer RUnlock }`), asked to by its one caller,
// then routes to a backend holding the one core, whose handler reads the
// core's state under the same lock: a recursive read lock on the paths
// that took it, which a sealing writer turns into a deadlock. A leader
// status that picks the locking accessor or the one for a held lock by
// a constant argument is told apart by that argument.

type vaultCore struct {
	stateLock sync.RWMutex
	sealed    bool
	leader    string
	router    *vaultRouter
}

type vaultRouter struct{ backend *systemBackend }

type systemBackend struct{ core *vaultCore }

func (c *vaultCore) handleRequest(path string) {
	c.switchedHandle(path, true)
}

func (c *vaultCore) switchedHandle(path string, doLocking bool) {
	if doLocking {
		c.stateLock.RLock()
		defer c.stateLock.RUnlock()
	}
	c.router.route(path) // want `RLock of vaultCore.stateLock by vaultRouter.route -> systemBackend.handle -> vaultCore.Sealed \(at switchedlock.go:\d+\), the same lock: the program makes one vaultCore \(at switchedlock.go:\d+\), while already read-locked since switchedlock.go:\d+ where that branch ran \(its unlock is deferred to the return\): deadlocks behind a waiting writer \[double-lock\]`
}

func (r *vaultRouter) route(path string) { r.backend.handle(path) }

func (b *systemBackend) handle(path string) { b.core.Sealed() }

func (c *vaultCore) Sealed() bool {
	c.stateLock.RLock()
	defer c.stateLock.RUnlock()
	return c.sealed
}

func (c *vaultCore) Leader() string {
	c.stateLock.RLock()
	defer c.stateLock.RUnlock()
	return c.leaderLocked()
}

func (c *vaultCore) leaderLocked() string { return c.leader }

// The request path holds the lock: lock is false there. Silent.
func (c *vaultCore) leaderRequest(doLocking bool) string {
	if doLocking {
		c.stateLock.RLock()
		defer c.stateLock.RUnlock()
	}
	return c.router.backend.leaderStatus(false)
}

func (b *systemBackend) leaderStatus(lock bool) string {
	leader := b.core.leaderLocked
	if lock {
		leader = b.core.Leader
	}
	return leader()
}

// The lock released before routing. Silent.
func (c *vaultCore) handleReleased(path string, doLocking bool) {
	if doLocking {
		c.stateLock.RLock()
	}
	sealed := c.sealed
	if doLocking {
		c.stateLock.RUnlock()
	}
	if !sealed {
		c.router.route(path)
	}
}

func (c *vaultCore) seal() {
	c.stateLock.Lock()
	defer c.stateLock.Unlock()
	c.sealed = true
}

func runVault() {
	c := &vaultCore{}
	c.router = &vaultRouter{backend: &systemBackend{core: c}}
	go c.seal()
	c.handleRequest("sys/seal-status")
	c.handleReleased("sys/leader", true)
	c.leaderRequest(true)
	c.router.backend.leaderStatus(true)
}
