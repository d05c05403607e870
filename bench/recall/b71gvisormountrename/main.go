// gVisor (google/gvisor), issue #3878 (2020): rename on a gofer mount racing a
// read of /proc/[pid]/mountinfo deadlocks the sentry. The mountinfo side of
// the cycle is reconstructed from the VFS2 code of that time.
//
// gofer's filesystem.RenameAt takes fs.renameMu for writing, walks to the new
// parent (gofer RPCs), and then asks the VFS layer whether the renamed dentry
// is a mount point: VirtualFilesystem.PrepareRenameDentry takes vfs.mountMu.
// Meanwhile GenerateProcMountInfo held vfs.mountMu for its whole walk over the
// task's mounts and, for each mount, called PathnameReachable, which asks every
// filesystem on the way to the root to prepend its part of the path through
// FilesystemImpl.PrependPath; gofer's PrependPath read-locks fs.renameMu. One
// goroutine holds renameMu and wants mountMu, the other holds mountMu and wants
// renameMu.
//
// The fixed twin does what GenerateProcMountInfo does today: it takes a
// reference on each mount under vfs.mountMu, drops mountMu, and only then calls
// PathnameReachable (and so PrependPath).
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

type FilesystemImpl interface {
	PrependPath(ctx context.Context, vfsroot, vd VirtualDentry, b *[]string) error
}

type Dentry struct {
	mu   sync.Mutex
	impl *dentry
}

type Mount struct {
	id     int
	fs     FilesystemImpl
	root   *Dentry
	parent *Mount
	point  *Dentry
	refs   int
}

type VirtualDentry struct {
	mount  *Mount
	dentry *Dentry
}

type MountNamespace struct {
	root        *Mount
	mountpoints map[*Dentry]uint32
}

type VirtualFilesystem struct {
	mountMu sync.Mutex
	mounts  []*Mount
}

func (vfs *VirtualFilesystem) PrepareRenameDentry(mntns *MountNamespace, from *Dentry) error {
	vfs.mountMu.Lock()
	if mntns.mountpoints[from] != 0 {
		vfs.mountMu.Unlock()
		return errors.New("EBUSY")
	}
	from.mu.Lock()
	vfs.mountMu.Unlock()
	return nil
}

func (vfs *VirtualFilesystem) CommitRenameReplaceDentry(ctx context.Context, from *Dentry) {
	from.mu.Unlock()
}

func (vfs *VirtualFilesystem) PathnameReachable(ctx context.Context, vfsroot, vd VirtualDentry) (string, error) {
	var b []string
	for {
		if err := vd.mount.fs.PrependPath(ctx, vfsroot, vd, &b); err != nil {
			return "", err
		}
		if vd.mount == vfsroot.mount {
			return "/" + strings.Join(b, "/"), nil
		}
		vd = VirtualDentry{mount: vd.mount.parent, dentry: vd.mount.point}
	}
}

func (vfs *VirtualFilesystem) GenerateProcMountInfo(ctx context.Context, taskRootDir VirtualDentry, buf *bytes.Buffer) {
	vfs.mountMu.Lock()
	defer vfs.mountMu.Unlock()
	for _, mnt := range vfs.mounts {
		path, err := vfs.PathnameReachable(ctx, taskRootDir, VirtualDentry{mount: mnt, dentry: mnt.root})
		if err != nil {
			continue
		}
		fmt.Fprintf(buf, "%d %d 0:%d / %s rw - 9p\n", mnt.id, taskRootDir.mount.id, mnt.id, path)
	}
}

type filesystem struct {
	vfsObj   *VirtualFilesystem
	renameMu sync.RWMutex
}

type dentry struct {
	vfsd     Dentry
	fs       *filesystem
	parent   *dentry
	name     string
	children map[string]*dentry
}

func (fs *filesystem) newDentry(parent *dentry, name string) *dentry {
	d := &dentry{fs: fs, parent: parent, name: name, children: map[string]*dentry{}}
	d.vfsd.impl = d
	if parent != nil {
		parent.children[name] = d
	}
	return d
}

func genericPrependPath(vfsroot VirtualDentry, mnt *Mount, d *dentry, b *[]string) error {
	for d != nil && d != vfsroot.dentry.impl && d != mnt.root.impl {
		*b = append([]string{d.name}, *b...)
		d = d.parent
	}
	return nil
}

func (fs *filesystem) PrependPath(ctx context.Context, vfsroot, vd VirtualDentry, b *[]string) error {
	fs.renameMu.RLock()
	defer fs.renameMu.RUnlock()
	return genericPrependPath(vfsroot, vd.mount, vd.dentry.impl, b)
}

func (fs *filesystem) walkParentDirLocked(ctx context.Context, start *dentry, comps []string) *dentry {
	d := start
	for _, name := range comps[:len(comps)-1] {
		time.Sleep(50 * time.Millisecond)
		d = d.children[name]
	}
	return d
}

func (fs *filesystem) RenameAt(ctx context.Context, mntns *MountNamespace, start *dentry, newPath string, oldParent *dentry, oldName string) error {
	fs.renameMu.Lock()
	defer fs.renameMu.Unlock()
	comps := strings.Split(newPath[1:], "/")
	newParent := fs.walkParentDirLocked(ctx, start, comps)
	renamed := oldParent.children[oldName]
	if err := fs.vfsObj.PrepareRenameDentry(mntns, &renamed.vfsd); err != nil {
		return err
	}
	delete(oldParent.children, oldName)
	renamed.parent, renamed.name = newParent, comps[len(comps)-1]
	newParent.children[renamed.name] = renamed
	fs.vfsObj.CommitRenameReplaceDentry(ctx, &renamed.vfsd)
	return nil
}

func main() {
	ctx := context.Background()
	vfsObj := &VirtualFilesystem{}
	rootFS := &filesystem{vfsObj: vfsObj}
	root := rootFS.newDentry(nil, "")
	home := rootFS.newDentry(root, "home")
	rootFS.newDentry(home, "notes.txt")
	mntPoint := rootFS.newDentry(rootFS.newDentry(root, "mnt"), "data")
	dataFS := &filesystem{vfsObj: vfsObj}
	rootMnt := &Mount{id: 1, fs: rootFS, root: &root.vfsd, refs: 1}
	dataMnt := &Mount{id: 2, fs: dataFS, root: &dataFS.newDentry(nil, "").vfsd, parent: rootMnt, point: &mntPoint.vfsd, refs: 1}
	vfsObj.mounts = []*Mount{rootMnt, dataMnt}
	mntns := &MountNamespace{root: rootMnt, mountpoints: map[*Dentry]uint32{&mntPoint.vfsd: 1}}

	go func() {
		err := rootFS.RenameAt(ctx, mntns, root, "/home/notes.bak", home, "notes.txt")
		fmt.Println("rename:", err)
	}()
	time.Sleep(10 * time.Millisecond)
	var buf bytes.Buffer
	vfsObj.GenerateProcMountInfo(ctx, VirtualDentry{mount: rootMnt, dentry: &root.vfsd}, &buf)
	fmt.Print(buf.String())
}
