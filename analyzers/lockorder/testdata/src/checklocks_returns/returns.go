// Package checklocks_returns: the lock state must be the same on every
// return path; reported once, at the function, and at each explicit
// return that keeps an annotated lock the function does not declare.
package checklocks_returns

import "sync"

type cache struct {
	mu    sync.Mutex
	rw    sync.RWMutex
	spare sync.Mutex // named by no annotation
	// +checklocks:mu
	hits int
}

func (c *cache) sometimes(x int) { // want `the function returns with different locks held on different paths: cache.mu \(taken at returns.go:\d+\) held on some return paths only \[inconsistent-return\]`
	if x > 0 {
		c.mu.Lock()
	}
}

// The leak of mu is reported as such; rw is taken on one path only, and
// the return that keeps it says so.
func (c *cache) earlyReturn(x int) int { // want `the function returns with different locks held on different paths: cache.rw \(taken at returns.go:\d+\) held on some return paths only \[inconsistent-return\]`
	c.mu.Lock()
	if x > 0 {
		return x // want `cache.mu taken at returns.go:\d+ is still held on this return path \(other paths release it\) \[lock-leak\]`
	}
	c.rw.Lock()
	c.mu.Unlock()
	return 0 // want `cache.rw taken at returns.go:\d+ is still held when the function returns on this path, but the function does not declare it: cache.rw is annotated \(a guard or a function names it\), so declare //confined:acquires c.rw \(or \+checklocksacquire\) or release it \[acquires\]`
}

// +checklocks:c.mu
func (c *cache) dropsRequired(x int) { // want `the function returns with different locks held on different paths: cache.mu \(taken at returns.go:\d+\) held on some return paths only \[inconsistent-return\]`
	if x > 0 {
		c.mu.Unlock()
		return // want `cache.mu is required by the function and must still be held exclusively when it returns \[requires\]`
	}
	c.hits++
}

// +checklocks:c.rw
func (c *cache) downgrades(x int) bool { // want `the function returns with different locks held on different paths: cache.rw \(taken at returns.go:\d+\) held on some return paths only \[inconsistent-return\]`
	if x > 0 {
		return false
	}
	c.rw.Unlock()
	c.rw.RLock()
	return true // want `cache.rw is required by the function and must still be held exclusively when it returns \[requires\]`
}

// A return already reported for the required lock it let go is not
// reported again for the other lock it took instead.
// +checklocks:a.mu
func swapsOwner(a, b *cache, x int) bool { // want `the function returns with different locks held on different paths: cache.mu \(taken at returns.go:\d+\), cache.mu \(taken at returns.go:\d+\) held on some return paths only \[inconsistent-return\]`
	if x > 0 {
		return false
	}
	a.mu.Unlock()
	b.mu.Lock()
	return true // want `cache.mu is required by the function and must still be held exclusively when it returns \[requires\]`
}

// Not reported: a TryLock, a conditional lock with a conditional unlock,
// a conditional lock with its deferred unlock, a lock of a value that
// exists on one path only, and the same locks on every path.
func (c *cache) try() bool {
	if !c.mu.TryLock() {
		return false
	}
	return true
}

func (c *cache) correlated(x int) {
	if x > 0 {
		c.mu.Lock()
	}
	if x > 0 {
		c.mu.Unlock()
	}
}

func (c *cache) conditionalDefer(x int) {
	if x > 0 {
		c.mu.Lock()
		defer c.mu.Unlock()
	}
}

func pick(cs []*cache, x int) *cache {
	if x > 0 {
		d := cs[x]
		d.mu.Lock()
		return d
	}
	return nil
}

func (c *cache) consistent(x int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if x > 0 {
		return c.hits
	}
	return 0
}
