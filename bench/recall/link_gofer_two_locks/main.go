// Pattern: gVisor pkg/sentry/fsimpl/gofer filesystem: fs.renameMu protects the
// dentry tree shape (parent/name/children), while a separate fs.mu (the
// dentry-cache lock) protects the LRU of cached dentries.
// Rename holds renameMu and walks d.parent, calling parent.touch() which takes
// only fs.mu. Lock order is always renameMu -> mu; nothing takes mu first.
package main

import (
	"container/list"
	"fmt"
	"sync"
)

type Filesystem struct {
	renameMu sync.RWMutex
	mu       sync.Mutex // dentry cache lock
	lru      *list.List
	evicted  int
}

type Dentry struct {
	fs       *Filesystem
	name     string
	parent   *Dentry            // guarded by fs.renameMu
	children map[string]*Dentry // guarded by fs.renameMu
	elem     *list.Element      // guarded by fs.mu
}

// touch marks d recently used; takes only fs.mu (not renameMu).
func (d *Dentry) touch() {
	d.fs.mu.Lock()
	defer d.fs.mu.Unlock()
	if d.elem == nil {
		d.elem = d.fs.lru.PushFront(d)
	} else {
		d.fs.lru.MoveToFront(d.elem)
	}
}

// isAncestorOf walks up from d; caller holds fs.renameMu.
func (a *Dentry) isAncestorOf(d *Dentry) bool {
	for ; d != nil; d = d.parent {
		if d == a {
			return true
		}
		if d.parent != nil {
			d.parent.touch() // different lock of the same owner
		}
	}
	return false
}

func (fs *Filesystem) Rename(d, newParent *Dentry, name string) error {
	fs.renameMu.Lock()
	defer fs.renameMu.Unlock()
	if d.isAncestorOf(newParent) {
		return fmt.Errorf("EINVAL: %s into own subtree", d.name)
	}
	delete(d.parent.children, d.name)
	d.parent, d.name = newParent, name
	newParent.children[name] = d
	d.touch()
	return nil
}

func (d *Dentry) Path() string {
	d.fs.renameMu.RLock()
	defer d.fs.renameMu.RUnlock()
	s := ""
	for cur := d; cur.parent != nil; cur = cur.parent {
		cur.touch()
		s = "/" + cur.name + s
	}
	return s
}

// evict trims the LRU under fs.mu only; never needs renameMu.
func (fs *Filesystem) evict(max int) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for fs.lru.Len() > max {
		d := fs.lru.Remove(fs.lru.Back()).(*Dentry)
		d.elem = nil
		fs.evicted++
	}
}

func main() {
	fs := &Filesystem{lru: list.New()}
	mk := func(p *Dentry, name string) *Dentry {
		d := &Dentry{fs: fs, name: name, parent: p, children: map[string]*Dentry{}}
		if p != nil {
			p.children[name] = d
		}
		return d
	}
	root := mk(nil, "")
	a, b := mk(root, "a"), mk(root, "b")
	leaves := []*Dentry{mk(a, "x"), mk(a, "y"), mk(b, "z")}
	var wg sync.WaitGroup
	for i, l := range leaves {
		wg.Add(1)
		go func(i int, l *Dentry) {
			defer wg.Done()
			for k := 0; k < 300; k++ {
				dst := []*Dentry{a, b}[(k+i)%2]
				_ = fs.Rename(l, dst, fmt.Sprintf("n%d", i))
				_ = fs.Rename(dst, l, "loop") // always rejected: dst is an ancestor of l
			}
		}(i, l)
	}
	for r := 0; r < 3; r++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for k := 0; k < 300; k++ {
				_ = leaves[k%3].Path()
			}
		}()
		go func() {
			defer wg.Done()
			for k := 0; k < 300; k++ {
				fs.evict(2)
			}
		}()
	}
	wg.Wait()
	fmt.Println("path:", leaves[0].Path(), "evicted>0:", fs.evicted > 0)
}
