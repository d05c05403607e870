// Project: seaweedfs (weed/mount, FUSE mount)
// Bug: WFS.Rename serialized directory mutations with per-directory-inode
//
//	locks kept in a map (guarded by a global mutex), and took them in
//	argument order: old parent first, then new parent. Two concurrent
//	cross-directory renames (a/x -> b/x and b/y -> a/y) lock the two
//	directory locks in opposite orders and deadlock the mount.
//
// Fix: acquire the two directory locks in a fixed (inode number) order.
package main

import (
	"fmt"
	"sync"
	"time"
)

type Entry struct {
	Name   string
	Inode  uint64
	Size   uint64
	Mtime  time.Time
	Chunks []string
}

type inodeLocks struct {
	mu    sync.Mutex // guards locks
	locks map[uint64]*sync.Mutex
}

func (il *inodeLocks) get(inode uint64) *sync.Mutex {
	il.mu.Lock()
	defer il.mu.Unlock()
	l, ok := il.locks[inode]
	if !ok {
		l = &sync.Mutex{}
		il.locks[inode] = l
	}
	return l
}

type filerClient struct {
	address string
	rpcs    int
	mu      sync.Mutex
}

func (fc *filerClient) AtomicRenameEntry(oldDir, oldName, newDir, newName string) error {
	fc.mu.Lock()
	fc.rpcs++
	fc.mu.Unlock()
	return nil
}

type WFS struct {
	option struct {
		FilerAddress string
		Collection   string
		Replication  string
	}
	dirLocks inodeLocks
	filer    *filerClient

	metaMu  sync.RWMutex
	dirs    map[uint64]string            // inode -> path
	entries map[uint64]map[string]*Entry // dir inode -> children
}

func (wfs *WFS) lookupEntry(dir uint64, name string) (*Entry, bool) {
	wfs.metaMu.RLock()
	defer wfs.metaMu.RUnlock()
	time.Sleep(30 * time.Millisecond) // cache miss: round trip to the filer
	e, ok := wfs.entries[dir][name]
	return e, ok
}

func (wfs *WFS) Rename(oldParent uint64, oldName string, newParent uint64, newName string) error {
	// FIX: lock the two directories in inode order.
	first, second := oldParent, newParent
	if first > second {
		first, second = second, first
	}
	firstLock := wfs.dirLocks.get(first)
	firstLock.Lock()
	defer firstLock.Unlock()

	entry, ok := wfs.lookupEntry(oldParent, oldName)
	if !ok {
		return fmt.Errorf("rename %s: no such file", oldName)
	}

	if second != first {
		secondLock := wfs.dirLocks.get(second)
		secondLock.Lock()
		defer secondLock.Unlock()
	}

	wfs.metaMu.RLock()
	oldDir, newDir := wfs.dirs[oldParent], wfs.dirs[newParent]
	wfs.metaMu.RUnlock()
	if err := wfs.filer.AtomicRenameEntry(oldDir, oldName, newDir, newName); err != nil {
		return err
	}

	wfs.metaMu.Lock()
	delete(wfs.entries[oldParent], oldName)
	entry.Name = newName
	wfs.entries[newParent][newName] = entry
	wfs.metaMu.Unlock()
	return nil
}

func main() {
	wfs := &WFS{
		dirLocks: inodeLocks{locks: map[uint64]*sync.Mutex{}},
		filer:    &filerClient{address: "localhost:8888"},
		dirs:     map[uint64]string{1: "/", 100: "/a", 200: "/b"},
		entries: map[uint64]map[string]*Entry{
			100: {"x": {Name: "x", Inode: 101, Size: 4096}},
			200: {"y": {Name: "y", Inode: 201, Size: 1 << 20}},
		},
	}
	wfs.option.FilerAddress = "localhost:8888"

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := wfs.Rename(100, "x", 200, "x"); err != nil { // mv /a/x /b/x
			fmt.Println(err)
		}
	}()
	go func() {
		defer wg.Done()
		if err := wfs.Rename(200, "y", 100, "y"); err != nil { // mv /b/y /a/y
			fmt.Println(err)
		}
	}()
	wg.Wait()
	fmt.Println("filer rpcs:", wfs.filer.rpcs)
}
