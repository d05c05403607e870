// Project: rclone/rclone (vfs/file.go File.Remove, vfs/read_write.go RWFileHandle.openPending), v1.4x, 2018-2019 (approximate).
// Bug: File.Remove locked f.mu and then f.muRW, while RWFileHandle.openPending holds f.muRW for the whole open and, after
// checking the cache, calls f.addRWOpen which takes f.mu; an unlink racing an open of the same file with --vfs-cache-mode
// writes deadlocks (AB-BA). The fix takes muRW before mu in Remove ("muRW must be locked before mu to avoid deadlock in
// RWFileHandle.openPending and .close").
package main

import (
	"context"
	"fmt"
	"os"
	"path"
	"sync"
	"time"
)

// ---- fs ----

type Object interface {
	Remote() string
	Remove(ctx context.Context) error
}

type memObject struct{ remote string }

func (o *memObject) Remote() string                   { return o.remote }
func (o *memObject) Remove(ctx context.Context) error { return nil }

// ---- vfs/vfscache ----

type Cache struct {
	mu    sync.Mutex
	items map[string]bool
}

func (c *Cache) Check(ctx context.Context, o Object, remote string) error {
	time.Sleep(50 * time.Millisecond) // compare fingerprints / download into the cache
	c.mu.Lock()
	c.items[remote] = true
	c.mu.Unlock()
	return nil
}

func (c *Cache) Exists(name string) bool { c.mu.Lock(); defer c.mu.Unlock(); return c.items[name] }
func (c *Cache) Remove(name string)      { c.mu.Lock(); delete(c.items, name); c.mu.Unlock() }

// ---- vfs ----

type VFS struct {
	cache *Cache
}

type Dir struct {
	vfs   *VFS
	mu    sync.RWMutex
	path  string
	items map[string]*File
}

func (d *Dir) addObject(f *File) { d.mu.Lock(); d.items[f.Name()] = f; d.mu.Unlock() }
func (d *Dir) delObject(leaf string) {
	d.mu.Lock()
	delete(d.items, leaf)
	d.mu.Unlock()
}

type File struct {
	muRW        sync.Mutex   // synchronize RWFileHandle.openPending(), RWFileHandle.close() and File.Remove
	mu          sync.RWMutex // protects the following
	d           *Dir
	leaf        string
	o           Object
	rwOpenCount int
}

func (f *File) Name() string { f.mu.RLock(); defer f.mu.RUnlock(); return f.leaf }
func (f *File) Path() string {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return path.Join(f.d.path, f.leaf)
}
func (f *File) getObject() Object { f.mu.RLock(); defer f.mu.RUnlock(); return f.o }
func (f *File) rwOpens() int      { f.mu.RLock(); defer f.mu.RUnlock(); return f.rwOpenCount }
func (f *File) addRWOpen()        { f.mu.Lock(); f.rwOpenCount++; f.mu.Unlock() }

// Remove the file
func (f *File) Remove() (err error) {
	f.mu.RLock()
	d := f.d
	f.mu.RUnlock()

	// Remove the object from the cache
	if d.vfs.cache != nil && d.vfs.cache.Exists(f.Path()) {
		d.vfs.cache.Remove(f.Path())
	}

	f.mu.Lock()
	f.muRW.Lock()
	if f.o != nil {
		err = f.o.Remove(context.TODO())
	}
	f.muRW.Unlock()
	f.mu.Unlock()

	// Remove the item from the directory listing
	d.delObject(f.Name())
	return err
}

type RWFileHandle struct {
	mu     sync.Mutex
	file   *File
	d      *Dir
	flags  int
	opened bool
}

// openPending opens the file if there is a pending open
//
// call with the lock held
func (fh *RWFileHandle) openPending(truncate bool) (err error) {
	if fh.opened {
		return nil
	}

	fh.file.muRW.Lock()
	defer fh.file.muRW.Unlock()

	o := fh.file.getObject()
	if fh.flags&os.O_TRUNC == 0 && !truncate {
		// If the remote object exists AND its cached file exists locally AND there are no
		// other RW handles with it open, then attempt to update it.
		if o != nil && fh.file.rwOpens() == 0 {
			if err = fh.d.vfs.cache.Check(context.TODO(), o, fh.file.Path()); err != nil {
				return err
			}
		}
	}
	fh.opened = true
	fh.file.addRWOpen()
	fh.d.addObject(fh.file) // make sure the directory has this object in it now
	return nil
}

func (fh *RWFileHandle) ReadAt(b []byte, off int64) (int, error) {
	fh.mu.Lock()
	defer fh.mu.Unlock()
	if err := fh.openPending(false); err != nil {
		return 0, err
	}
	return len(b), nil
}

func main() {
	v := &VFS{cache: &Cache{items: map[string]bool{}}}
	d := &Dir{vfs: v, path: "photos", items: map[string]*File{}}
	f := &File{d: d, leaf: "img.jpg", o: &memObject{remote: "photos/img.jpg"}}
	d.items[f.leaf] = f
	fh := &RWFileHandle{file: f, d: d, flags: os.O_RDWR}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // FUSE read on a freshly opened rw handle
		defer wg.Done()
		_, _ = fh.ReadAt(make([]byte, 4096), 0)
	}()
	go func() { // FUSE unlink of the same file
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		_ = f.Remove()
	}()
	wg.Wait()
	fmt.Println("files left:", len(d.items))
}
