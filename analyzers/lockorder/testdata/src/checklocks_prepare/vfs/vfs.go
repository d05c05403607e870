// Package vfs prepares deletions: PrepareDelete takes the dentry's lock only
// when it succeeds, and CommitDelete lets it go.
package vfs

import (
	"errors"
	"sync"
)

var ErrBusy = errors.New("busy")

type Dentry struct {
	mu   sync.Mutex
	dead bool // +checklocks:mu
}

type VFS struct {
	mu     sync.Mutex
	mounts map[*Dentry]int
}

// +checklocksacquire:d.mu
func (v *VFS) PrepareDelete(d *Dentry) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.mounts[d] != 0 {
		return ErrBusy // +checklocksforce: inconsistent return.
	}
	d.mu.Lock()
	return nil
}

// +checklocksrelease:d.mu
func (v *VFS) CommitDelete(d *Dentry) {
	d.dead = true
	d.mu.Unlock()
}
