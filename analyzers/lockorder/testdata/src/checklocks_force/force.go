// Package checklocks_force: +checklocksforce silences the failing check on
// its line, and the lock it wanted counts as held from there on.
package checklocks_force

import "sync"

type box struct {
	mu sync.Mutex
	// +checklocks:mu
	v int
}

// +checklocks:b.mu
func (b *box) setLocked(v int) { b.v = v }

func (b *box) forcedAccess() {
	b.v = 1 // +checklocksforce: the caller holds b.mu
	b.v = 2
	b.setLocked(3)
}

func (b *box) forcedCall() {
	b.setLocked(1) // +checklocksforce
	b.v = 2
}

func (b *box) notForced() {
	b.v = 1 // want `write to box.v without holding box.mu \[guardedby\]`
}
