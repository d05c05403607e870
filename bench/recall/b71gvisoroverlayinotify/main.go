// gVisor (google/gvisor), issue #14680 (2026): mkdir in an overlay directory
// watched by a one-shot inotify watch deadlocks the sentry.
//
// Overlay's doCreateAt read-locks fs.renameMu (deferred unlock), walks to the
// parent and creates the child in the upper layer. Unlike gofer it builds no
// child dentry, so nothing pins the parent, a cached dentry with zero
// references. Still under renameMu it calls parent.watches.Notify(IN_CREATE);
// the IN_ONESHOT watch expires, cleanupExpiredWatches calls Inotify.RmWatch,
// and RmWatch calls the target's OnZeroWatches, which sees zero references and
// takes fs.renameMu.Lock while the same task holds the read lock. The task
// waits on itself, and every later path walk (a stat here) queues behind it.
//
// The fixed twin takes a reference on the parent before notifying and hands it
// to the deferred renameMuRUnlockAndCheckDrop, which drops it after renameMu is
// released, so OnZeroWatches never needs the write lock under the read lock.
package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const IN_CREATE, IN_ISDIR, IN_ONESHOT = 0x00000100, 0x40000000, 0x80000000

type WatchTarget interface {
	Watches() *Watches
	OnZeroWatches(ctx context.Context)
}

type Watch struct {
	owner   *Inotify
	wd      int32
	target  WatchTarget
	mask    uint32
	expired atomic.Int32
}

type Watches struct {
	mu sync.RWMutex
	ws map[uint64]*Watch
}

func (w *Watches) Notify(ctx context.Context, name string, events uint32) {
	var hasExpired bool
	w.mu.RLock()
	for _, watch := range w.ws {
		if watch.mask&events != 0 && watch.mask&IN_ONESHOT != 0 {
			watch.expired.Store(1)
			hasExpired = true
		}
	}
	w.mu.RUnlock()
	if hasExpired {
		w.cleanupExpiredWatches(ctx)
	}
}

func (w *Watches) cleanupExpiredWatches(ctx context.Context) {
	var toRemove []*Watch
	w.mu.RLock()
	for _, watch := range w.ws {
		if watch.expired.Load() == 1 {
			toRemove = append(toRemove, watch)
		}
	}
	w.mu.RUnlock()
	for _, watch := range toRemove {
		watch.owner.RmWatch(ctx, watch.wd)
	}
}

type Inotify struct {
	id      uint64
	mu      sync.Mutex
	watches map[int32]*Watch
}

func (i *Inotify) AddWatch(target WatchTarget, mask uint32) {
	w := &Watch{owner: i, wd: int32(len(i.watches) + 1), target: target, mask: mask}
	i.watches[w.wd] = w
	target.Watches().ws = map[uint64]*Watch{i.id: w}
}

func (i *Inotify) RmWatch(ctx context.Context, wd int32) {
	i.mu.Lock()
	w := i.watches[wd]
	delete(i.watches, wd)
	i.mu.Unlock()
	ws := w.target.Watches()
	ws.mu.Lock()
	delete(ws.ws, i.id)
	n := len(ws.ws)
	ws.mu.Unlock()
	if n == 0 {
		w.target.OnZeroWatches(ctx)
	}
}

type filesystem struct {
	renameMu sync.RWMutex
	root     *dentry
}

type dentry struct {
	fs       *filesystem
	name     string
	parent   *dentry
	children map[string]*dentry
	created  int
	refs     atomic.Int64
	watches  Watches
}

func (d *dentry) Watches() *Watches { return &d.watches }
func (d *dentry) IncRef()           { d.refs.Add(1) }

func (d *dentry) DecRef(ctx context.Context) {
	if d.refs.Add(-1) == 0 {
		d.fs.renameMu.Lock()
		d.checkDropLocked(ctx)
		d.fs.renameMu.Unlock()
	}
}

func (d *dentry) OnZeroWatches(ctx context.Context) {
	if d.refs.Load() == 0 {
		d.fs.renameMu.Lock()
		d.checkDropLocked(ctx)
		d.fs.renameMu.Unlock()
	}
}

func (d *dentry) checkDropLocked(ctx context.Context) {
	if d.refs.Load() == 0 && d.parent != nil {
		delete(d.parent.children, d.name)
	}
}

func (fs *filesystem) walkParentDirLocked(ctx context.Context, comps []string, ds **[]*dentry) *dentry {
	d := fs.root
	for _, name := range comps[:len(comps)-1] {
		d = d.children[name]
	}
	return d
}

func (fs *filesystem) renameMuRUnlockAndCheckDrop(ctx context.Context, dsp **[]*dentry) {
	fs.renameMu.RUnlock()
	if *dsp != nil {
		for _, d := range **dsp {
			d.DecRef(ctx)
		}
	}
}

func (fs *filesystem) doCreateAt(ctx context.Context, path string, ev uint32, create func(parent *dentry, name string)) error {
	var ds *[]*dentry
	fs.renameMu.RLock()
	defer fs.renameMuRUnlockAndCheckDrop(ctx, &ds)
	comps := strings.Split(path[1:], "/")
	parent := fs.walkParentDirLocked(ctx, comps, &ds)
	name := comps[len(comps)-1]
	create(parent, name)
	parent.watches.Notify(ctx, name, ev)
	return nil
}

func (fs *filesystem) MkdirAt(ctx context.Context, path string) error {
	return fs.doCreateAt(ctx, path, IN_CREATE|IN_ISDIR, func(parent *dentry, name string) {
		parent.created++
	})
}

func (fs *filesystem) StatAt(ctx context.Context, path string) int {
	var ds *[]*dentry
	fs.renameMu.RLock()
	defer fs.renameMuRUnlockAndCheckDrop(ctx, &ds)
	d := fs.walkParentDirLocked(ctx, append(strings.Split(path[1:], "/"), "."), &ds)
	return len(d.children) + d.created
}

func main() {
	ctx := context.Background()
	fs := &filesystem{}
	fs.root = &dentry{fs: fs, name: "/"}
	a := &dentry{fs: fs, name: "a", parent: fs.root, children: map[string]*dentry{}}
	c := &dentry{fs: fs, name: "c", parent: fs.root, children: map[string]*dentry{"d": {fs: fs, name: "d"}}}
	fs.root.children = map[string]*dentry{"a": a, "c": c}
	ino := &Inotify{id: 1, watches: map[int32]*Watch{}}
	ino.AddWatch(a, IN_CREATE|IN_ONESHOT)
	go fs.MkdirAt(ctx, "/a/b")
	time.Sleep(50 * time.Millisecond)
	fmt.Println("stat /c: entries", fs.StatAt(ctx, "/c"))
}
