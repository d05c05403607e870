package treeorder

import "sync"

// A directory's parent is kept as an interface that a directory and the
// root both implement. Closing a child updates the directory under its
// lock and passes its new node up to the parent, which, when it is a
// directory, locks itself: child, then parent. Syncing locks a directory
// and asks each child directory for its node, which locks the child:
// parent, then child.

type childCloser interface {
	closeChild(name string, node int) error
}

type Directory struct {
	lock      sync.Mutex
	parent    childCloser
	childDirs map[string]*Directory
	name      string
	node      int
}

func (d *Directory) closeChild(name string, node int) error {
	d.lock.Lock()
	defer d.lock.Unlock()
	d.node += node
	return d.parent.closeChild(d.name, d.node) // want `lock order inversion along a tree of Directory: Directory.lock then its parent's in Directory.closeChild .* but Directory.lock then a child's in childDirs in Directory.GetNode`
}

func (d *Directory) GetNode() int {
	d.lock.Lock()
	defer d.lock.Unlock()
	for _, c := range d.childDirs {
		d.node += c.GetNode()
	}
	return d.node
}

func (d *Directory) Mkdir(name string) *Directory {
	d.lock.Lock()
	defer d.lock.Unlock()
	child := &Directory{parent: d, childDirs: map[string]*Directory{}, name: name}
	d.childDirs[name] = child
	return child
}

type Root struct {
	mu   sync.Mutex
	dir  *Directory
	node int
}

func NewRoot() *Root {
	r := &Root{}
	r.dir = &Directory{parent: r, childDirs: map[string]*Directory{}}
	return r
}

func (r *Root) closeChild(name string, node int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.node = node
	return nil
}

// Correct: the child releases its lock before it tells its parent, so
// the only order is parent, then child.
type closer interface {
	close(name string, node int)
}

type Folder struct {
	lock     sync.Mutex
	parent   closer
	children map[string]*Folder
	name     string
	node     int
}

func (f *Folder) close(name string, node int) {
	f.lock.Lock()
	f.node += node
	n := f.node
	f.lock.Unlock()
	f.parent.close(f.name, n)
}

func (f *Folder) Node() int {
	f.lock.Lock()
	defer f.lock.Unlock()
	for _, c := range f.children {
		f.node += c.Node()
	}
	return f.node
}

func (f *Folder) Mkdir(name string) *Folder {
	f.lock.Lock()
	defer f.lock.Unlock()
	child := &Folder{parent: f, children: map[string]*Folder{}, name: name}
	f.children[name] = child
	return child
}

type Volume struct {
	mu   sync.Mutex
	top  *Folder
	node int
}

func NewVolume() *Volume {
	v := &Volume{}
	v.top = &Folder{parent: v, children: map[string]*Folder{}}
	return v
}

func (v *Volume) close(name string, node int) {
	v.mu.Lock()
	v.node = node
	v.mu.Unlock()
}
