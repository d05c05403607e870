// Pebble (cockroachdb/pebble, vendored by CockroachDB), PR #5993 (2026): MemFS
// deadlocks when CrashClone races WAL recycling.
//
// vfs.MemFS guards its tree with cloneMu, an RWMutex that every mutating
// operation read-locks and CrashClone write-locks so that a crash clone sees a
// consistent snapshot. ReuseForWrite (and likewise Link and Lock) read-locked
// cloneMu with a deferred unlock and then called the public Rename (or
// Create), which read-locks cloneMu again. sync.RWMutex forbids recursive read
// locking: once CrashClone's Lock is queued between the two read locks, the
// inner RLock waits for the writer and the writer waits for the outer read
// lock. In the metamorphic crash tests this shows up when the WAL manager
// recycles an old log file (StandaloneManager.Create -> FS.ReuseForWrite)
// while the test takes a crash clone; every later writer then queues too.
//
// The fixed twin follows the PR: ReuseForWrite calls an unexported rename that
// expects cloneMu to be held already, and Rename is a thin locking wrapper.
package main

import (
	"fmt"
	"path"
	"sync"
	"time"
)

type File interface {
	Write(p []byte) (int, error)
}

type memNode struct {
	data     []byte
	children map[string]*memNode
}

type memFile struct {
	name  string
	n     *memNode
	fs    *MemFS
	write bool
}

func (f *memFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	f.n.data = append(f.n.data, p...)
	return len(p), nil
}

type MemFS struct {
	mu      sync.Mutex
	root    *memNode
	cloneMu sync.RWMutex
}

func NewMem() *MemFS {
	return &MemFS{root: &memNode{children: map[string]*memNode{}}}
}

func (y *MemFS) walk(fullname string, f func(dir *memNode, frag string) error) error {
	y.mu.Lock()
	defer y.mu.Unlock()
	dir := y.root
	for _, frag := range splitDirs(path.Dir(fullname)) {
		dir = dir.children[frag]
	}
	return f(dir, path.Base(fullname))
}

func splitDirs(dir string) (frags []string) {
	for dir != "/" && dir != "." {
		frags = append([]string{path.Base(dir)}, frags...)
		dir = path.Dir(dir)
	}
	return frags
}

func (y *MemFS) Create(fullname string) (File, error) {
	y.cloneMu.RLock()
	defer y.cloneMu.RUnlock()
	var ret *memFile
	err := y.walk(fullname, func(dir *memNode, frag string) error {
		n := &memNode{}
		dir.children[frag] = n
		ret = &memFile{name: frag, n: n, fs: y, write: true}
		return nil
	})
	return ret, err
}

func (y *MemFS) Rename(oldname, newname string) error {
	y.cloneMu.RLock()
	defer y.cloneMu.RUnlock()
	var n *memNode
	if err := y.walk(oldname, func(dir *memNode, frag string) error {
		n = dir.children[frag]
		delete(dir.children, frag)
		return nil
	}); err != nil {
		return err
	}
	return y.walk(newname, func(dir *memNode, frag string) error {
		dir.children[frag] = n
		return nil
	})
}

func (y *MemFS) ReuseForWrite(oldname, newname string) (File, error) {
	y.cloneMu.RLock()
	defer y.cloneMu.RUnlock()
	time.Sleep(20 * time.Millisecond)
	if err := y.Rename(oldname, newname); err != nil {
		return nil, err
	}
	var f *memFile
	err := y.walk(newname, func(dir *memNode, frag string) error {
		dir.children[frag].data = nil
		f = &memFile{name: frag, n: dir.children[frag], fs: y, write: true}
		return nil
	})
	return f, err
}

func (y *MemFS) CrashClone() *MemFS {
	y.cloneMu.Lock()
	defer y.cloneMu.Unlock()
	y.mu.Lock()
	defer y.mu.Unlock()
	var clone func(n *memNode) *memNode
	clone = func(n *memNode) *memNode {
		c := &memNode{data: append([]byte(nil), n.data...), children: map[string]*memNode{}}
		for name, child := range n.children {
			c.children[name] = clone(child)
		}
		return c
	}
	return &MemFS{root: clone(y.root)}
}

type StandaloneManager struct {
	fs       *MemFS
	dirname  string
	recycler []uint64
}

func makeLogFilename(num uint64) string { return fmt.Sprintf("%06d.log", num) }

func (m *StandaloneManager) Create(wn uint64) (File, error) {
	newLogName := path.Join(m.dirname, makeLogFilename(wn))
	if len(m.recycler) > 0 {
		recycleLogName := path.Join(m.dirname, makeLogFilename(m.recycler[0]))
		m.recycler = m.recycler[1:]
		return m.fs.ReuseForWrite(recycleLogName, newLogName)
	}
	return m.fs.Create(newLogName)
}

type DB struct {
	mu struct {
		sync.Mutex
		log struct {
			manager *StandaloneManager
			writer  File
			num     uint64
		}
	}
}

func (d *DB) rotateWAL() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mu.log.num++
	w, err := d.mu.log.manager.Create(d.mu.log.num)
	if err == nil {
		d.mu.log.writer = w
	}
	return err
}

func main() {
	fs := NewMem()
	fs.root.children["db"] = &memNode{children: map[string]*memNode{}}
	d := &DB{}
	d.mu.log.manager = &StandaloneManager{fs: fs, dirname: "/db"}
	d.rotateWAL()
	d.mu.log.writer.Write([]byte("batch 1"))
	d.rotateWAL()
	d.mu.log.manager.recycler = append(d.mu.log.manager.recycler, 1)

	go func() {
		fmt.Println("rotate WAL:", d.rotateWAL())
	}()
	time.Sleep(5 * time.Millisecond)
	clone := fs.CrashClone()
	fmt.Println("crash clone: /db has", len(clone.root.children["db"].children), "files")
}
