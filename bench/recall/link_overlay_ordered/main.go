// Pattern: gVisor pkg/sentry/fsimpl/overlay (and Linux overlayfs copy-up):
// an upper-layer dentry's parent link may point into the lower filesystem.
// Operations that touch two filesystems lock both owners in a fixed global
// order (by filesystem id), so opposite-direction moves cannot deadlock.
package main

import (
	"fmt"
	"sync"
)

type Filesystem struct {
	id   uint64
	name string
	mu   sync.Mutex
}

type Dentry struct {
	fs       *Filesystem
	name     string
	parent   *Dentry // may belong to a different Filesystem
	children map[string]*Dentry
}

// lockTwo locks two (possibly identical) filesystems in id order.
func lockTwo(a, b *Filesystem) func() {
	if a == b {
		a.mu.Lock()
		return a.mu.Unlock
	}
	if a.id > b.id {
		a, b = b, a
	}
	a.mu.Lock()
	b.mu.Lock()
	return func() { b.mu.Unlock(); a.mu.Unlock() }
}

func newDentry(fs *Filesystem, name string, parent *Dentry) *Dentry {
	d := &Dentry{fs: fs, name: name, parent: parent, children: map[string]*Dentry{}}
	if parent != nil {
		unlock := lockTwo(fs, parent.fs)
		parent.children[name] = d
		unlock()
	}
	return d
}

// Reparent needs d's fs, the new parent's fs and the old parent's fs: it
// locks them (deduplicated) in ascending id order and revalidates d.parent.
func (d *Dentry) Reparent(newParent *Dentry) {
	for {
		d.fs.mu.Lock()
		old := d.parent
		d.fs.mu.Unlock()
		fss := []*Filesystem{d.fs, newParent.fs, old.fs}
		// sort by id (at most three) and dedupe
		for i := 0; i < len(fss); i++ {
			for j := i + 1; j < len(fss); j++ {
				if fss[j].id < fss[i].id {
					fss[i], fss[j] = fss[j], fss[i]
				}
			}
		}
		var held []*Filesystem
		for i, fs := range fss {
			if i == 0 || fs != fss[i-1] {
				fs.mu.Lock()
				held = append(held, fs)
			}
		}
		ok := d.parent == old
		if ok {
			delete(old.children, d.name)
			newParent.children[d.name] = d
			d.parent = newParent
		}
		for i := len(held) - 1; i >= 0; i-- {
			held[i].mu.Unlock()
		}
		if ok {
			return
		}
	}
}

// Path walks across filesystems, holding one filesystem lock at a time.
func (d *Dentry) Path() string {
	d.fs.mu.Lock()
	name, p := d.name, d.parent
	fsName := d.fs.name
	d.fs.mu.Unlock()
	if p == nil {
		return fsName + ":"
	}
	return p.Path() + "/" + name
}

func main() {
	lower := &Filesystem{id: 1, name: "lower"}
	upper := &Filesystem{id: 2, name: "upper"}
	lroot := newDentry(lower, "", nil)
	ldir := newDentry(lower, "etc", lroot)
	udir := newDentry(upper, "etc.upper", lroot) // upper dentry, lower parent
	files := make([]*Dentry, 8)
	for i := range files {
		fs := lower
		if i%2 == 0 {
			fs = upper
		}
		files[i] = newDentry(fs, fmt.Sprintf("f%d", i), ldir)
	}
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Add(1)
		go func(i int, f *Dentry) {
			defer wg.Done()
			for k := 0; k < 200; k++ {
				if (k+i)%2 == 0 {
					f.Reparent(udir) // lower -> upper
				} else {
					f.Reparent(ldir) // upper -> lower
				}
				_ = f.Path()
			}
		}(i, f)
	}
	wg.Wait()
	fmt.Println(files[0].Path(), files[1].Path())
}
