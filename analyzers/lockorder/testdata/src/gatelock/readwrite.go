package gatelock

import "sync"

// A gate held for writing on one side and for reading on the other still
// keeps the two orders apart: a rename under renameMu.Lock() never runs
// beside an unlink under renameMu.RLock(). Silent.
type FS struct {
	renameMu sync.RWMutex
}

type Dentry struct {
	mu         sync.Mutex
	childrenMu sync.Mutex
}

func (f *FS) Unlink(parent, child *Dentry) {
	f.renameMu.RLock()
	defer f.renameMu.RUnlock()
	parent.childrenMu.Lock()
	child.mu.Lock()
	child.mu.Unlock()
	parent.childrenMu.Unlock()
}

func (f *FS) Rename(renamed, newParent *Dentry) {
	f.renameMu.Lock()
	defer f.renameMu.Unlock()
	renamed.mu.Lock()
	newParent.childrenMu.Lock()
	newParent.childrenMu.Unlock()
	renamed.mu.Unlock()
}

// Two readers of the gate run together: Link and Stat, both under RLock,
// take a pair of locks in opposite orders and can deadlock.
type Dir struct {
	mu     sync.RWMutex
	attrMu sync.Mutex
	listMu sync.Mutex
}

func (d *Dir) Link() {
	d.mu.RLock()
	defer d.mu.RUnlock()
	d.listMu.Lock()
	d.attrMu.Lock()
	d.attrMu.Unlock()
	d.listMu.Unlock()
}

func (d *Dir) Stat() {
	d.mu.RLock()
	defer d.mu.RUnlock()
	d.attrMu.Lock()
	d.listMu.Lock() // want `lock order inversion: Dir.listMu then Dir.attrMu in Dir.Link \(readwrite.go:46 -> readwrite.go:47\) but Dir.attrMu then Dir.listMu in Dir.Stat \(readwrite.go:55 -> readwrite.go:56\) \[lock-order\]`
	d.listMu.Unlock()
	d.attrMu.Unlock()
}
