package backpointer

import (
	"sync"
	"testing"
)

// A back-pointer through an exported field declared in a test file: only
// the package's tests can store into it, so it is as closed as a main
// package (a deadlock reproduced as a test, vault's SystemBackend.Core).
type SystemBackend struct{ Core *Core }

type Core struct {
	stateLock sync.RWMutex
	leader    string
	backend   *SystemBackend
}

func (b *SystemBackend) leaderStatus() string { return b.Core.Leader() }

func (c *Core) Leader() string {
	c.stateLock.RLock()
	defer c.stateLock.RUnlock()
	return c.leader
}

func (c *Core) HandleRequest() string {
	c.stateLock.RLock()
	defer c.stateLock.RUnlock()
	return c.backend.leaderStatus() // want `RLock of Core.stateLock by SystemBackend.leaderStatus -> Core.Leader \(at exported_test.go:\d+\) while already read-locked since exported_test.go:\d+: deadlocks behind a waiting writer \[double-lock\]`
}

func (c *Core) Seal() {
	c.stateLock.Lock()
	defer c.stateLock.Unlock()
	c.leader = ""
}

func TestLeader(t *testing.T) {
	c := &Core{}
	c.backend = &SystemBackend{Core: c}
	go c.Seal()
	_ = c.HandleRequest()
}
