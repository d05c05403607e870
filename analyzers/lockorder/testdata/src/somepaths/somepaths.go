// Package somepaths: a caller holding a lock that calls, on some branch
// only, a function that takes that lock on every path deadlocks whenever
// the branch runs. The branch is the caller's choice, not the locking
// function's own test of its state: reported as a double lock.
package somepaths

import "sync"

type Table struct {
	mu      sync.RWMutex
	buckets [][]string
	size    int
}

// Count read-locks on every path: an exported entry point.
func (t *Table) Count(i int) int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.buckets[i])
}

// split asks the exported Count whether the new bucket is still full.
func (t *Table) split() {
	t.buckets = append(t.buckets, nil)
	if t.Count(len(t.buckets)-1) >= t.size {
		t.split()
	}
}

// add splits only when the last bucket is full.
func (t *Table) add(p string) bool {
	last := len(t.buckets) - 1
	if len(t.buckets[last]) < t.size {
		t.buckets[last] = append(t.buckets[last], p)
		return true
	}
	t.split()
	return false
}

func (t *Table) TryAdd(p string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.add(p) // want `Table.mu locked again by Table.add -> Table.split -> Table.Count \(at somepaths.go:\d+, on the paths that call Table.Count\) while held since somepaths.go:\d+: self-deadlock \[double-lock\]`
}

type Core struct {
	stateLock sync.RWMutex
	sealed    bool
	leader    string
	tokens    map[string]bool
}

func (c *Core) Leader() string {
	c.stateLock.RLock()
	defer c.stateLock.RUnlock()
	return c.leader
}

func (c *Core) route(path string) string {
	switch path {
	case "sys/leader":
		return c.Leader()
	default:
		return ""
	}
}

func (c *Core) handle(token, path string) string {
	if !c.tokens[token] {
		return "denied"
	}
	return c.route(path)
}

// HandleRequest holds the read lock; a request for sys/leader read-locks
// again, and a Seal waiting to write in between blocks both.
func (c *Core) HandleRequest(token, path string) string {
	c.stateLock.RLock()
	defer c.stateLock.RUnlock()
	if c.sealed {
		return "sealed"
	}
	return c.handle(token, path) // want `RLock of Core.stateLock by Core.handle -> Core.route -> Core.Leader \(at somepaths.go:\d+, on the paths that call Core.Leader\) while already read-locked since somepaths.go:\d+: deadlocks behind a waiting writer \[double-lock\]`
}

func (c *Core) Seal() {
	c.stateLock.Lock()
	defer c.stateLock.Unlock()
	c.sealed = true
}
