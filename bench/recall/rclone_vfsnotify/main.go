// Project: rclone (vfs/dir.go, vfs/vfs.go, backend/cache/cache.go)
// Bug: vfs.New registers root.changeNotify (a method value) with the backend's ChangeNotify.
// Dir.ReadDirAll holds d.mu while listing the remote; the cache backend notices upstream changes
// during List and invokes the stored notify callback synchronously, which lands in
// Dir.ForgetPath -> d.mu.Lock on the same goroutine: self-deadlock on listing.
// Upstream fix: do not hold the Dir lock across the remote List call; modelled, issue number not recalled.
package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

type EntryType int

const (
	EntryDirectory EntryType = iota
	EntryObject
)

type Features struct {
	ChangeNotify func(ctx context.Context, notifyFunc func(string, EntryType), pollInterval <-chan time.Duration)
}

type Fs interface {
	List(ctx context.Context, dir string) ([]string, error)
	Features() *Features
}

// cacheFs mimics backend/cache: it keeps a listing cache and notifies upstream changes.
type cacheFs struct {
	mu       sync.Mutex
	remote   map[string]time.Time
	seen     map[string]time.Time
	notify   func(string, EntryType)
	features *Features
}

func newCacheFs() *cacheFs {
	f := &cacheFs{remote: map[string]time.Time{}, seen: map[string]time.Time{}}
	f.features = &Features{ChangeNotify: f.changeNotify}
	return f
}

func (f *cacheFs) changeNotify(ctx context.Context, notifyFunc func(string, EntryType), _ <-chan time.Duration) {
	f.mu.Lock()
	f.notify = notifyFunc
	f.mu.Unlock()
}

func (f *cacheFs) Features() *Features { return f.features }

func (f *cacheFs) notifyChangeUpstream(remote string, entryType EntryType) {
	f.mu.Lock()
	fn := f.notify
	f.mu.Unlock()
	if fn != nil {
		fn(remote, entryType)
	}
}

func (f *cacheFs) List(ctx context.Context, dir string) ([]string, error) {
	var names, changed []string
	f.mu.Lock()
	for name, mod := range f.remote {
		if !strings.HasPrefix(name, dir) {
			continue
		}
		names = append(names, name)
		if f.seen[name] != mod {
			f.seen[name] = mod
			changed = append(changed, name)
		}
	}
	f.mu.Unlock()
	for _, name := range changed {
		f.notifyChangeUpstream(name, EntryObject)
	}
	sort.Strings(names)
	return names, nil
}

type Dir struct {
	vfs   *VFS
	f     Fs
	mu    sync.Mutex
	path  string
	read  time.Time
	items []string
}

func (d *Dir) _readDir() error {
	if !d.read.IsZero() && time.Since(d.read) < d.vfs.dirCacheTime {
		return nil
	}
	entries, err := d.f.List(context.Background(), d.path)
	if err != nil {
		return err
	}
	d.items = entries
	d.read = time.Now()
	return nil
}

func (d *Dir) ReadDirAll() ([]string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d._readDir(); err != nil {
		return nil, err
	}
	return append([]string(nil), d.items...), nil
}

func (d *Dir) ForgetPath(relativePath string, entryType EntryType) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.read = time.Time{}
}

func (d *Dir) changeNotify(relativePath string, entryType EntryType) {
	d.ForgetPath(relativePath, entryType)
}

type VFS struct {
	f            Fs
	root         *Dir
	dirCacheTime time.Duration
	pollChan     chan time.Duration
}

func New(f Fs) *VFS {
	vfs := &VFS{f: f, dirCacheTime: 5 * time.Minute, pollChan: make(chan time.Duration)}
	vfs.root = &Dir{vfs: vfs, f: f, path: ""}
	if do := f.Features().ChangeNotify; do != nil {
		do(context.Background(), vfs.root.changeNotify, vfs.pollChan)
	}
	return vfs
}

func main() {
	f := newCacheFs()
	f.remote["docs/report.txt"] = time.Now()
	vfs := New(f)

	// `rclone mount remote: /mnt --vfs-cache-mode writes`; `ls /mnt`
	items, err := vfs.root.ReadDirAll()
	fmt.Println(items, err)

	f.mu.Lock()
	f.remote["docs/report.txt"] = time.Now().Add(time.Second)
	f.mu.Unlock()
	vfs.root.ForgetPath("", EntryDirectory)
	items, err = vfs.root.ReadDirAll()
	fmt.Println(items, err)
}
