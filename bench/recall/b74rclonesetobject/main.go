// Project: rclone/rclone (vfs/dir.go, vfs/file.go, vfs/write.go), v1.45, December 2018.
// Bug: File.setObject, called when a written file handle is closed, holds File.mu and then calls Dir.addObject, which
// takes Dir.mu; Dir.ReadDirAll holds Dir.mu while it re-lists a directory whose cache was invalidated by --poll-interval
// change notifications, and _readDirFromEntries calls File.setObjectNoUpdate, which takes File.mu. A listing and a
// file close in the same directory lock the two mutexes in opposite orders (rclone/rclone#2811). The fix releases
// File.mu before calling into the Dir (the File-before-Dir lock ordering rclone adopted).
package main

import (
	"fmt"
	"path"
	"sync"
	"time"
)

// Object is fs.Object, an object on the remote.
type Object interface {
	Remote() string
	SetModTime(t time.Time) error
}

type object struct {
	remote  string
	modTime time.Time
	rtt     time.Duration // round trip to the cloud provider
}

func (o *object) Remote() string { return o.remote }
func (o *object) SetModTime(t time.Time) error {
	time.Sleep(2 * o.rtt) // read the object, then update its metadata
	o.modTime = t
	return nil
}

// Fs is the remote (e.g. the drive backend).
type Fs struct {
	mu      sync.Mutex
	objects map[string]*object
	rtt     time.Duration
}

func (f *Fs) List(dir string) []Object {
	time.Sleep(f.rtt)
	f.mu.Lock()
	defer f.mu.Unlock()
	var entries []Object
	for name, o := range f.objects {
		if path.Dir(name) == dir {
			entries = append(entries, o) // the real backend makes a directory listing call
		}
	}
	return entries
}

func (f *Fs) Put(remote string) Object {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.objects[remote] = &object{remote: remote, rtt: f.rtt}
	return f.objects[remote] // the real backend uploads the data here
}

// Node is vfs.Node, a Dir or a File.
type Node interface{ Name() string }

type Dir struct {
	f            *Fs
	path         string
	dirCacheTime time.Duration

	mu    sync.Mutex // protects the following
	read  time.Time  // time directory entry last read
	items map[string]Node
}

type File struct {
	d    *Dir
	leaf string

	mu             sync.Mutex // protects the following
	o              Object
	pendingModTime time.Time
}

func (d *Dir) Name() string  { return path.Base(d.path) }
func (f *File) Name() string { return f.leaf }

// ForgetPath clears the dir cache of relativePath; the backend's ChangeNotify (--poll-interval) calls it.
func (d *Dir) ForgetPath(relativePath string) {
	d.mu.Lock()
	sub, isDir := d.items[relativePath].(*Dir)
	d.mu.Unlock()
	if isDir {
		sub.mu.Lock()
		sub.read = time.Time{}
		sub.mu.Unlock()
	}
}

// addObject adds a new object or directory to the directory.
func (d *Dir) addObject(node Node) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.items[node.Name()] = node
}

// _readDir reads the directory if it has expired; call with d.mu held.
func (d *Dir) _readDir() {
	if when := time.Now(); when.Sub(d.read) >= d.dirCacheTime {
		d._readDirFromEntries(d.f.List(d.path))
		d.read = when
	}
}

// _readDirFromEntries merges the listing into d.items; call with d.mu held.
func (d *Dir) _readDirFromEntries(entries []Object) {
	for _, obj := range entries {
		name := path.Base(obj.Remote())
		if file, ok := d.items[name].(*File); ok {
			file.setObjectNoUpdate(obj) // update the existing file node with the new object
		} else {
			d.items[name] = &File{d: d, leaf: name, o: obj}
		}
	}
}

// ReadDirAll reads the contents of the directory.
func (d *Dir) ReadDirAll() (items []Node) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d._readDir()
	for _, item := range d.items {
		items = append(items, item)
	}
	return items
}

// applyPendingModTime sets the modtime if required; call with f.mu held.
func (f *File) applyPendingModTime() error {
	if f.pendingModTime.IsZero() {
		return nil
	}
	defer func() { f.pendingModTime = time.Time{} }()
	return f.o.SetModTime(f.pendingModTime)
}

// setObject updates the object when written and adds it to the directory.
func (f *File) setObject(o Object) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.o = o
	_ = f.applyPendingModTime()
	f.d.addObject(f)
}

// setObjectNoUpdate updates the object but doesn't update the directory cache - for use by the directory cache.
func (f *File) setObjectNoUpdate(o Object) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.o = o
}

// WriteFileHandle is vfs/write.go's handle for a file being uploaded.
type WriteFileHandle struct {
	mu     sync.Mutex
	file   *File
	remote string
}

func (fh *WriteFileHandle) close() {
	fh.mu.Lock()
	defer fh.mu.Unlock()
	fh.file.setObject(fh.file.d.f.Put(fh.remote)) // the upload finished
}

func main() {
	remote := &Fs{objects: map[string]*object{}, rtt: 50 * time.Millisecond}
	root := &Dir{f: remote, path: ".", dirCacheTime: time.Hour, items: map[string]Node{}}
	dir := &Dir{f: remote, path: "test-deadlock", dirCacheTime: time.Hour, items: map[string]Node{}}
	root.items["test-deadlock"], _ = dir, remote.Put("test-deadlock/1")
	dir.ReadDirAll() // populate the dir cache
	file := dir.items["1"].(*File)
	file.pendingModTime = time.Now() // a touch of the file is pending
	// echo "hello" > /mnt/tmp/test-deadlock/1
	fh := &WriteFileHandle{file: file, remote: "test-deadlock/1"}

	// The drive backend's change poller (--poll-interval) reports a change in the directory.
	root.ForgetPath("test-deadlock")

	closed := make(chan struct{})
	go func() { // the shell closes the file after writing
		time.Sleep(10 * time.Millisecond)
		fh.close()
		close(closed)
	}()
	fmt.Println("ls:", len(dir.ReadDirAll()), "entries") // ls /mnt/tmp/test-deadlock
	<-closed
	fmt.Println("closed", file.Name())
}
