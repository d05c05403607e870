package checklocks_force

import "sync"

// A lock a +checklocksforce asserts held is the caller's, not one taken
// here: returning with it on one path and not another is no inconsistent
// return (gVisor's updateMetadataLocked forces each implementation's
// call).
type inode struct {
	mu sync.Mutex
	n  int // +checklocks:mu
}

type impl struct{ in *inode }

// +checklocks:i.in.mu
func (i *impl) update() { i.n() }

// +checklocks:i.in.mu
func (i *impl) n() { i.in.n++ }

// +checklocks:in.mu
func (in *inode) updateVia(a, b *impl, first bool) {
	if first {
		a.update() // +checklocksforce: a.in is in
		return
	}
	b.update() // +checklocksforce: b.in is in
}
