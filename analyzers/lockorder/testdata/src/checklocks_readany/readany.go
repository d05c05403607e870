// Package checklocks_readany: +checklocksreadany on a field with several
// guards lets a read hold any one of them (shared or exclusive); a write
// still needs all, one finding per lock missing.
package checklocks_readany

import (
	"sync"
	"sync/atomic"

	lib "checklocks_readanylib"
)

type index struct {
	mu sync.Mutex
	rw sync.RWMutex

	// +checklocks:mu
	// +checklocks:rw
	// +checklocksreadany
	size int

	// +checklocks:mu
	// +checklocks:rw
	// +checklocksreadany
	// +checkatomic
	hits int32
}

func (x *index) readUnderMu() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.size
}

func (x *index) readUnderRLock() int {
	x.rw.RLock()
	defer x.rw.RUnlock()
	return x.size
}

func (x *index) writeUnderBoth(n int) {
	x.mu.Lock()
	x.rw.Lock()
	x.size = n
	x.size++
	x.rw.Unlock()
	x.mu.Unlock()
}

func (x *index) readUnlocked() int {
	return x.size // want `read of index.size without holding any of index.mu, index.rw \(\+checklocksreadany: a read needs one of them\) \[guardedby\]`
}

func (x *index) readSomePaths(c bool) int {
	if c {
		x.mu.Lock()
	}
	n := x.size // want `read of index.size without holding any of index.mu, index.rw \(\+checklocksreadany: a read needs one of them\); index.mu is held on some paths only \(taken at readany.go:56\) \[guardedby\]`
	if c {
		x.mu.Unlock()
	}
	return n
}

func (x *index) writeUnderMu(n int) {
	x.mu.Lock()
	x.size = n // want `write to index.size without holding index.rw \[guardedby\]`
	x.mu.Unlock()
}

func (x *index) writeUnderRLock(n int) {
	x.rw.RLock()
	x.size = n // want `write to index.size without holding index.mu \[guardedby\]` `write to index.size with index.rw only read-locked \(since readany.go:72\): writes need Lock \[guardedby-write-shared\]`
	x.rw.RUnlock()
}

// An increment reads and writes: the write's findings, one per lock.
func (x *index) incUnlocked() {
	x.size++ // want `write to index.size without holding index.mu \[guardedby\]` `write to index.size without holding index.rw \[guardedby\]`
}

// Atomic and readany: an atomic read needs no lock, a plain read one of
// the locks, a write all of them.
func (x *index) atomicUses() int32 {
	n := atomic.LoadInt32(&x.hits)
	x.rw.RLock()
	n += x.hits
	x.rw.RUnlock()
	x.mu.Lock()
	atomic.StoreInt32(&x.hits, n) // want `write to index.hits without holding index.rw \[guardedby\]`
	x.mu.Unlock()
	return x.hits // want `read of index.hits without holding any of index.mu, index.rw \(\+checklocksreadany: a read needs one of them\) \[guardedby\]`
}

// A +checklocksforce line counts the locks as held from there on.
func (x *index) forced() int {
	n := x.size // +checklocksforce: the caller holds mu
	return n + x.size
}

// Across packages, through a generic type.
func readImported(p *lib.Pair[int]) int {
	p.OtherMu.RLock()
	defer p.OtherMu.RUnlock()
	return p.Value
}

func writeImported(p *lib.Pair[int]) {
	p.Mu.Lock()
	p.Value = 1 // want `write to Pair.Value without holding Pair.OtherMu \[guardedby\]`
	p.Mu.Unlock()
}

func readImportedUnlocked(p *lib.Pair[int]) int {
	return p.Value // want `read of Pair.Value without holding any of Pair.Mu, Pair.OtherMu \(\+checklocksreadany: a read needs one of them\) \[guardedby\]`
}
