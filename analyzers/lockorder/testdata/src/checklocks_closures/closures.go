// Package checklocks_closures: a function literal run in place is checked
// under its callers' states (the join of its call sites; a deferred one at
// each return), its parameters bound to the arguments.
package checklocks_closures

import "sync"

type acct struct {
	mu sync.Mutex
	// +checklocks:mu
	bal int
}

func literalWithArgument(a *acct) {
	a.mu.Lock()
	func(x *acct) { x.bal++ }(a)
	a.mu.Unlock()
}

func literalArgumentUnlocked(a, b *acct) {
	a.mu.Lock()
	func(x *acct) {
		x.bal++ // want `write to acct.bal without holding acct.mu \[guardedby\]`
	}(b)
	a.mu.Unlock()
}

// Created while the lock is held, called after the unlock: checked at the
// call, where the lock is not held.
func createdLockedCalledLater(a *acct) {
	a.mu.Lock()
	bump := func() {
		a.bal++ // want `write to acct.bal with acct.mu held on some paths only \(taken at closures.go:\d+\): it must be held on every path \[guardedby\]`
	}
	bump()
	a.mu.Unlock()
	bump()
}

func calledTwiceLocked(a *acct) {
	bump := func() { a.bal++ }
	a.mu.Lock()
	bump()
	bump()
	a.mu.Unlock()
}

func deferredUnderLock(a *acct) {
	a.mu.Lock()
	defer func() {
		a.bal++
		a.mu.Unlock()
	}()
}

func deferredAfterUnlock(a *acct) {
	a.mu.Lock()
	defer func() {
		a.bal++ // want `write to acct.bal without holding acct.mu \[guardedby\]`
	}()
	a.mu.Unlock()
}

// A defer inside a literal runs at the literal's return, not the caller's.
func innerDefer(a *acct) {
	a.mu.Lock()
	defer a.mu.Unlock()
	func() {
		defer func() { a.bal++ }()
	}()
	a.bal++
}

func apply(f func()) { f() }

// Passed to a call: probably run now, maybe later; the caller's lock is
// lent to it (accepted), as the contract assumes.
func lent(a *acct) {
	a.mu.Lock()
	apply(func() { a.bal++ })
	a.mu.Unlock()
}

// A closure run in place is its caller's code: a lock it leaves held is
// the caller's to release, and the caller is judged at its own return.
func lockInPlace(c *acct) {
	func() {
		c.mu.Lock()
	}()
	c.bal++
	c.mu.Unlock()
}

func leakInPlace(c *acct) { // want `acct.mu taken at closures.go:\d+ is still held when the function returns, but the function does not declare it: .*\[acquires\]`
	func() {
		c.mu.Lock()
	}()
	c.bal++
}
