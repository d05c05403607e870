package checklocks_closures

import "sync"

// A literal run in place whose paths leave an annotated lock in different
// states is reported at the literal, as a function would be: annotations
// rely on one state on every return. An unannotated flag helper
// (`lock := func() { if need { mu.Lock() } }`) stays its caller's choice
// (branches/flagclosure.go).

type ledger struct {
	mu sync.RWMutex
	// +checklocks:mu
	entries int
}

func lockOneOfTwo(a, b *ledger, first bool) {
	func() { // want `the function returns with different locks held on different paths: ledger.mu \(taken at returnstates.go:\d+\), ledger.mu \(taken at returnstates.go:\d+\) held on some return paths only \[inconsistent-return\]`
		if first {
			a.mu.Lock()
		} else {
			b.mu.Lock()
		}
	}()
}

// The caller goes on holding the lock, in a mode it cannot know, and
// says nothing of it: its own finding.
func lockInTwoModes(l *ledger, write bool) { // want `ledger.mu taken at returnstates.go:\d+ is still held when the function returns, but the function does not declare it: .* \[acquires\]`
	func() { // want `the function returns with different locks held on different paths: ledger.mu \(taken at returnstates.go:\d+\) held on some return paths only \[inconsistent-return\]`
		if write {
			l.mu.Lock()
		} else {
			l.mu.RLock()
		}
	}()
}

// One state on every path of the literal: silent.
func lockEither(l *ledger, write bool) {
	func() {
		if write {
			l.mu.Lock()
			l.entries++
			l.mu.Unlock()
		} else {
			l.mu.RLock()
			_ = l.entries
			l.mu.RUnlock()
		}
	}()
}
