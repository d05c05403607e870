// Pattern: gVisor pkg/sentry/vfs PathnameWithDeleted / genericfstree: path
// generation walks dentry parents inside one filesystem under that
// filesystem's renameMu, then crosses a mount point into the parent mount's
// filesystem. The child fs lock is released before the parent fs lock is taken,
// so two filesystem locks are never held at once.
package main

import (
	"fmt"
	"strings"
	"sync"
)

type Filesystem struct {
	name     string
	renameMu sync.RWMutex
}

type Dentry struct {
	fs     *Filesystem
	name   string
	parent *Dentry // same fs; nil at fs root
}

type Mount struct {
	ns     *MountNamespace
	fs     *Filesystem
	root   *Dentry
	parent *Mount  // guarded by ns.mu
	point  *Dentry // dentry in parent.fs; guarded by ns.mu
}

type MountNamespace struct {
	mu sync.Mutex
}

// prependLocked appends names up to the fs root; caller holds fs.renameMu.
func (d *Dentry) prependLocked(parts []string) []string {
	for ; d.parent != nil; d = d.parent {
		parts = append(parts, d.name)
	}
	return parts
}

func (m *Mount) Pathname(d *Dentry) string {
	var parts []string
	for {
		d.fs.renameMu.RLock()
		parts = d.prependLocked(parts)
		d.fs.renameMu.RUnlock() // release before crossing into another fs

		m.ns.mu.Lock()
		pm, pt := m.parent, m.point
		m.ns.mu.Unlock()
		if pm == nil {
			break
		}
		m, d = pm, pt
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return "/" + strings.Join(parts, "/")
}

// Rename changes a dentry's parent/name under the fs write lock.
func (fs *Filesystem) Rename(d, newParent *Dentry, name string) {
	fs.renameMu.Lock()
	defer fs.renameMu.Unlock()
	d.parent, d.name = newParent, name
}

func main() {
	ns := &MountNamespace{}
	rootFS := &Filesystem{name: "rootfs"}
	dataFS := &Filesystem{name: "datafs"}
	r := &Dentry{fs: rootFS}
	mnt := &Dentry{fs: rootFS, name: "mnt", parent: r}
	srv := &Dentry{fs: rootFS, name: "srv", parent: r}
	dpoint := &Dentry{fs: rootFS, name: "data", parent: mnt}
	droot := &Dentry{fs: dataFS}
	logs := &Dentry{fs: dataFS, name: "logs", parent: droot}
	arch := &Dentry{fs: dataFS, name: "archive", parent: droot}
	file := &Dentry{fs: dataFS, name: "app.log", parent: logs}

	rootMount := &Mount{ns: ns, fs: rootFS, root: r}
	dataMount := &Mount{ns: ns, fs: dataFS, root: droot, parent: rootMount, point: dpoint}

	var wg sync.WaitGroup
	wg.Add(3)
	go func() { // renames in the lower (root) filesystem
		defer wg.Done()
		for i := 0; i < 500; i++ {
			if i%2 == 0 {
				rootFS.Rename(dpoint, srv, "data")
			} else {
				rootFS.Rename(dpoint, mnt, "data")
			}
		}
	}()
	go func() { // renames in the mounted filesystem
		defer wg.Done()
		for i := 0; i < 500; i++ {
			if i%2 == 0 {
				dataFS.Rename(file, arch, "app.log.1")
			} else {
				dataFS.Rename(file, logs, "app.log")
			}
		}
	}()
	go func() { // remount toggles the mount's attachment point
		defer wg.Done()
		for i := 0; i < 500; i++ {
			ns.mu.Lock()
			dataMount.point = []*Dentry{dpoint, mnt}[i%2]
			ns.mu.Unlock()
		}
	}()
	for k := 0; k < 4; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				_ = dataMount.Pathname(file)
			}
		}()
	}
	wg.Wait()
	fmt.Println(dataMount.Pathname(file))
}
