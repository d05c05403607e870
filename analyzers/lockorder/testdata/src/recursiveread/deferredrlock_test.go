package recursiveread

import (
	"sync"
	"testing"
)

// A deferred RLock where RUnlock was meant (hugo's template Lookup): the
// function returns with the lock read-locked twice, so the next Lock
// blocks for good, on the test's own goroutine if no other writes. No
// running writer is needed for that. The caller's Lock, with the read
// locks left behind, is reported too.

type namespace struct {
	mu        sync.RWMutex
	templates map[string]string
}

func (n *namespace) lookup(name string) (string, bool) {
	n.mu.RLock()
	defer n.mu.RLock() // want `RLock of namespace.mu deferred while already read-locked since deferredrlock_test.go:\d+: the function returns with it read-locked twice and nothing releases it \(RUnlock was meant\?\) \[double-lock\]`
	t, ok := n.templates[name]
	return t, ok
}

func (n *namespace) lookupFixed(name string) (string, bool) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	t, ok := n.templates[name]
	return t, ok
}

func (n *namespace) add(name, text string) {
	n.mu.Lock()
	n.templates[name] = text
	n.mu.Unlock()
}

func TestLookupThenAdd(t *testing.T) {
	n := &namespace{templates: map[string]string{}}
	n.lookup("a")
	n.lookupFixed("a")
	n.add("b", "text") // want `Lock of namespace.mu by namespace.add .* while read-locked since deferredrlock_test.go:\d+: a read lock cannot be upgraded, this deadlocks \[lock-upgrade\]`
}
