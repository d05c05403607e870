// Project: google/gvisor
// Version: December 2019, after commit 02ab1f18 (copy up parent on UDS bind)
// Files/functions: pkg/sentry/fs/dirent.go: renameMu, Dirent.Bind,
// genericCreate, lockDirectory; inode.go: Inode.Bind; inode_overlay.go:
// overlayBind; copy_up.go: copyUp, copyUpLockedForRename; mounts.go:
// MountNamespace.FindMount; pkg/sentry/socket/unix: SocketOperations.Bind.
// Issue: google/gvisor #1397 "Sentry stuck in overlay bind", fixed by PR #1394
// "Fix deadlock in overlay bind".
//
// renameMu is a package-level RWMutex of the VFS1 fs package. Binding a unix
// socket runs Dirent.Bind -> genericCreate, which takes the directory locks
// with lockDirectory (renameMu.RLock, dirMu, mu) and runs the create closure:
// Inode.Bind -> overlayBind, which since commit 02ab1f18 first copies the
// parent up with copyUp, and copyUp takes renameMu.RLock again. A process
// reading /proc/[pid]/mounts calls MountNamespace.FindMount, which locks
// renameMu for writing. If that writer arrives between the two read locks it
// waits for the first one, and the second read lock waits behind the writer.
// The fix calls copyUpLockedForRename from overlayBind, since renameMu is
// already held by genericCreate.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// renameMu protects the parent of Dirents and the names of children.
var renameMu sync.RWMutex

type BoundEndpoint interface{ Path() string }

type InodeOperations interface {
	Bind(ctx context.Context, dir *Inode, name string, ep BoundEndpoint) (*Dirent, error)
}

type overlayEntry struct {
	copyMu sync.RWMutex
	upper  *Inode
	lower  *Inode // read-only layer
}

type Inode struct {
	InodeOperations InodeOperations
	overlay         *overlayEntry
}

type Dirent struct {
	Inode    *Inode
	name     string
	parent   *Dirent
	mu       sync.Mutex
	dirMu    sync.RWMutex
	children map[string]*Dirent
}

type tmpfsDir struct{ entries map[string]BoundEndpoint } // upper layer directory

func (t *tmpfsDir) Bind(ctx context.Context, dir *Inode, name string, ep BoundEndpoint) (*Dirent, error) {
	t.entries[name] = ep
	return &Dirent{Inode: &Inode{}, name: name}, nil
}

func (d *Dirent) lockDirectory() func() {
	renameMu.RLock()
	d.dirMu.Lock()
	d.mu.Lock()
	return func() {
		d.mu.Unlock()
		d.dirMu.Unlock()
		renameMu.RUnlock()
	}
}

func (d *Dirent) genericCreate(ctx context.Context, root *Dirent, name string, create func() error) error {
	unlock := d.lockDirectory()
	defer unlock()
	if _, ok := d.children[name]; ok {
		return errors.New("EEXIST")
	}
	return create()
}

func (d *Dirent) finishCreate(child *Dirent, name string) {
	child.parent = d
	d.children[name] = child
}

func (d *Dirent) Bind(ctx context.Context, root *Dirent, name string, data BoundEndpoint) (*Dirent, error) {
	var childDir *Dirent
	err := d.genericCreate(ctx, root, name, func() (e error) {
		if childDir, e = d.Inode.Bind(ctx, d, name, data); e == nil {
			d.finishCreate(childDir, name)
		}
		return e
	})
	return childDir, err
}

func (i *Inode) Bind(ctx context.Context, parent *Dirent, name string, data BoundEndpoint) (*Dirent, error) {
	if i.overlay != nil {
		return overlayBind(ctx, i.overlay, parent, name, data)
	}
	return i.InodeOperations.Bind(ctx, i, name, data)
}

func overlayBind(ctx context.Context, o *overlayEntry, parent *Dirent, name string, data BoundEndpoint) (*Dirent, error) {
	time.Sleep(50 * time.Millisecond) // another process reads /proc/self/mounts
	if err := copyUp(ctx, parent); err != nil {
		return nil, err
	}
	o.copyMu.RLock()
	defer o.copyMu.RUnlock()
	if o.upper == nil {
		return nil, errors.New("EOPNOTSUPP")
	}
	d, err := o.upper.InodeOperations.Bind(ctx, o.upper, name, data)
	if err != nil {
		return nil, err
	}
	d.Inode = &Inode{overlay: &overlayEntry{upper: d.Inode}}
	return d, nil
}

func copyUp(ctx context.Context, d *Dirent) error {
	renameMu.RLock()
	defer renameMu.RUnlock()
	return copyUpLockedForRename(ctx, d)
}

func copyUpLockedForRename(ctx context.Context, d *Dirent) error {
	o := d.Inode.overlay
	o.copyMu.Lock()
	defer o.copyMu.Unlock()
	if o.upper != nil {
		return nil
	}
	return doCopyUp(ctx, o)
}

func doCopyUp(ctx context.Context, o *overlayEntry) error {
	o.upper = &Inode{InodeOperations: &tmpfsDir{entries: map[string]BoundEndpoint{}}}
	return nil
}

type Mount struct{ ID int }

type MountNamespace struct {
	mu     sync.Mutex
	mounts map[*Dirent]*Mount
}

func (mns *MountNamespace) FindMount(d *Dirent) *Mount {
	mns.mu.Lock()
	defer mns.mu.Unlock()
	renameMu.Lock()
	defer renameMu.Unlock()
	for ; d != nil; d = d.parent {
		if mnt, ok := mns.mounts[d]; ok {
			return mnt
		}
	}
	return nil
}

type unixEndpoint struct{ path string }

func (e *unixEndpoint) Path() string { return e.path }

// SocketOperations.Bind for an AF_UNIX socket bound to dir/name.
func socketBind(ctx context.Context, root, dir *Dirent, name string) error {
	_, err := dir.Bind(ctx, root, name, &unixEndpoint{path: name})
	return err
}

func main() {
	ctx := context.Background()
	root := &Dirent{name: "/", children: map[string]*Dirent{},
		Inode: &Inode{overlay: &overlayEntry{upper: &Inode{InodeOperations: &tmpfsDir{entries: map[string]BoundEndpoint{}}}}}}
	tmp := &Dirent{name: "tmp", parent: root, children: map[string]*Dirent{},
		Inode: &Inode{overlay: &overlayEntry{lower: &Inode{}}}}
	root.children["tmp"] = tmp
	mns := &MountNamespace{mounts: map[*Dirent]*Mount{root: {ID: 1}}}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // bind(2) of /tmp/hello
		defer wg.Done()
		fmt.Println("bind:", socketBind(ctx, root, tmp, "hello"))
	}()
	go func() { // read of /proc/[pid]/mounts
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		fmt.Println("mount:", mns.FindMount(tmp).ID)
	}()
	wg.Wait()
}
