package recursiveread

import "sync"

// One hold, several calls that each read-lock the same lock again: one
// problem, the hold (a BDD walking its nodes under the table's read lock
// while its mark helpers read-lock the table too). One finding, at the
// first call, naming the others.
type tables struct {
	sync.RWMutex
	marks map[int]bool
}

func (t *tables) ismarked(n int) bool {
	t.RLock()
	defer t.RUnlock()
	return t.marks[n]
}

func (t *tables) marknode(n int) {
	t.RLock()
	defer t.RUnlock()
	_ = t.marks[n]
}

func (t *tables) unmarknode(n int) {
	t.RLock()
	defer t.RUnlock()
	_ = t.marks[n]
}

func (t *tables) allnodes(nodes []int) int {
	t.RLock()
	defer t.RUnlock()
	count := 0
	for _, n := range nodes {
		t.marknode(n) // want `RLock of tables.RWMutex by tables.marknode \(at onehold.go:21\) while already read-locked since onehold.go:33: deadlocks behind a waiting writer; 2 more calls under this hold take it again \[double-lock\]`
		if t.ismarked(n) {
			count++
		}
		t.unmarknode(n)
	}
	return count
}

// Two holds in two functions are two findings.
func (t *tables) firstMarked(nodes []int) int {
	t.RLock()
	defer t.RUnlock()
	for _, n := range nodes {
		if t.ismarked(n) { // want `RLock of tables.RWMutex by tables.ismarked \(at onehold.go:15\) while already read-locked since onehold.go:48: deadlocks behind a waiting writer \[double-lock\]`
			return n
		}
	}
	return -1
}

// The correct counterpart: the walk reads the marks itself.
func (t *tables) countMarked(nodes []int) int {
	t.RLock()
	defer t.RUnlock()
	count := 0
	for _, n := range nodes {
		if t.marks[n] {
			count++
		}
	}
	return count
}

func (t *tables) reset() {
	t.Lock()
	defer t.Unlock()
	t.marks = map[int]bool{}
}

// A callee that takes the held lock twice, read-locking it and later
// locking it (go-redis' ring rebalance, called by SetAddrs under the
// lock): the first take blocks already, one finding for the call.
type ring struct {
	mu     sync.RWMutex
	shards []string
	hash   int
}

func (r *ring) rebalance() {
	r.mu.RLock()
	n := len(r.shards)
	r.mu.RUnlock()
	r.mu.Lock()
	r.hash = n
	r.mu.Unlock()
}

func (r *ring) SetAddrs(addrs []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.shards = addrs
	r.rebalance() // want `ring.mu locked again by ring.rebalance \(at onehold.go:\d+\) while held since onehold.go:\d+: self-deadlock \[double-lock\]`
}
