// Project: ipfs/go-ipfs, now ipfs/kubo (mfs/dir.go Directory.closeChild, GetNode, sync, Flush; mfs/file.go File.Close, flushUp; mfs/system.go Root.closeChild), go-ipfs 0.4.0/0.4.1, early 2016 (approximate: the fix split closeChild into closeChildUpdate, "the portion of closeChild that needs to be locked around"; PR number not remembered).
// Bug: Directory.closeChild, called when a child file or directory is flushed, locks the directory (deferred unlock) and, still holding it, propagates its new node to the parent through the childCloser interface, whose Directory implementation locks the parent. Directory.GetNode, used by "ipfs files flush" and "ipfs files stat", locks a directory and syncs its child directories through their GetNode, which locks each child. A file under /a being closed while / is flushed deadlocks child-then-parent against parent-then-child. The fix updates the child entry under the lock and calls parent.closeChild after unlocking.
package main

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type Key string

// Node is a simplified merkledag.Node.
type Node struct {
	Links []*Link
	Data  []byte
}

type Link struct {
	Name string
	Node *Node
}

var ErrNotFound = errors.New("merkledag: not found")

func (n *Node) RemoveNodeLink(name string) error {
	for i, l := range n.Links {
		if l.Name == name {
			n.Links = append(n.Links[:i], n.Links[i+1:]...)
			return nil
		}
	}
	return ErrNotFound
}

func (n *Node) AddNodeLinkClean(name string, that *Node) error {
	n.Links = append(n.Links, &Link{Name: name, Node: that})
	return nil
}

func (n *Node) Copy() *Node { return &Node{Links: append([]*Link(nil), n.Links...), Data: n.Data} }

type DAGService interface {
	Add(*Node) (Key, error)
}

type memDag struct {
	puts  atomic.Int64
	onAdd func(*Node) // test hook: datastore latency
}

func (ds *memDag) Add(n *Node) (Key, error) {
	if ds.onAdd != nil {
		ds.onAdd(n)
	}
	return Key(fmt.Sprintf("QmNode%d", ds.puts.Add(1))), nil
}

// childCloser is implemented by Directory and Root.
type childCloser interface {
	closeChild(string, *Node) error
}

type Directory struct {
	dserv     DAGService
	parent    childCloser
	childDirs map[string]*Directory
	files     map[string]*File
	lock      sync.Mutex
	node      *Node
	name      string
}

func NewDirectory(name string, node *Node, parent childCloser, dserv DAGService) *Directory {
	return &Directory{dserv: dserv, parent: parent, name: name, node: node,
		childDirs: make(map[string]*Directory), files: make(map[string]*File)}
}

// closeChild updates the child by the given name to the dag node 'nd'
// and changes its own dag node, then propagates the changes upward
func (d *Directory) closeChild(name string, nd *Node) error {
	if _, err := d.dserv.Add(nd); err != nil {
		return err
	}
	d.lock.Lock()
	defer d.lock.Unlock()
	if err := d.updateChild(name, nd); err != nil {
		return err
	}
	return d.parent.closeChild(d.name, d.node)
}

func (d *Directory) updateChild(name string, nd *Node) error {
	if err := d.node.RemoveNodeLink(name); err != nil && err != ErrNotFound {
		return err
	}
	return d.node.AddNodeLinkClean(name, nd)
}

func (d *Directory) sync() error {
	for name, dir := range d.childDirs {
		nd, err := dir.GetNode()
		if err != nil {
			return err
		}
		if _, err := d.dserv.Add(nd); err != nil {
			return err
		}
		if err := d.updateChild(name, nd); err != nil {
			return err
		}
	}
	for name, file := range d.files {
		if err := d.updateChild(name, file.GetNode()); err != nil {
			return err
		}
	}
	return nil
}

func (d *Directory) GetNode() (*Node, error) {
	d.lock.Lock()
	defer d.lock.Unlock()
	if err := d.sync(); err != nil {
		return nil, err
	}
	return d.node.Copy(), nil
}

// Flush persists the directory and propagates it to its parent ("ipfs files flush").
func (d *Directory) Flush() error {
	nd, err := d.GetNode()
	if err != nil {
		return err
	}
	return d.parent.closeChild(d.name, nd)
}

func (d *Directory) Mkdir(name string) *Directory {
	d.lock.Lock()
	defer d.lock.Unlock()
	ndir := &Node{Data: []byte("dir:" + name)}
	_ = d.node.AddNodeLinkClean(name, ndir)
	dirobj := NewDirectory(name, ndir, d, d.dserv)
	d.childDirs[name] = dirobj
	return dirobj
}

func (d *Directory) AddFile(name string, data []byte) *File {
	d.lock.Lock()
	defer d.lock.Unlock()
	nd := &Node{Data: data}
	_ = d.node.AddNodeLinkClean(name, nd)
	fi := &File{parent: d, name: name, dserv: d.dserv, node: nd}
	d.files[name] = fi
	return fi
}

type File struct {
	parent     childCloser
	name       string
	hasChanges bool
	dserv      DAGService
	node       *Node // stands in for the DagModifier
	lock       sync.Mutex
}

func (fi *File) Write(b []byte) {
	fi.lock.Lock()
	defer fi.lock.Unlock()
	fi.node = &Node{Data: append(append([]byte(nil), fi.node.Data...), b...)}
	fi.hasChanges = true
}

func (fi *File) GetNode() *Node {
	fi.lock.Lock()
	defer fi.lock.Unlock()
	return fi.node
}

// Close flushes, then propagates the modified dag node up the directory structure.
func (fi *File) Close() error {
	fi.lock.Lock()
	if !fi.hasChanges {
		fi.lock.Unlock()
		return nil
	}
	fi.hasChanges = false
	nd := fi.node
	if _, err := fi.dserv.Add(nd); err != nil {
		fi.lock.Unlock()
		return err
	}
	// explicit unlock *only* before closeChild call
	fi.lock.Unlock()
	return fi.parent.closeChild(fi.name, nd)
}

// Root is the mfs root; it republishes the root node (IPNS) on change.
type Root struct {
	val   *Directory
	dserv DAGService
	last  atomic.Value // stands in for the Republisher
}

func (kr *Root) closeChild(name string, nd *Node) error {
	k, err := kr.dserv.Add(nd)
	if err == nil {
		kr.last.Store(k) // repub.Update(k)
	}
	return err
}

func main() {
	ds := &memDag{}
	root := &Root{dserv: ds}
	root.val = NewDirectory("", &Node{Data: []byte("dir:/")}, root, ds)
	a := root.val.Mkdir("a")
	f := a.AddFile("f", []byte("hello"))

	// Slow datastore write when /a's new node is propagated into /.
	propagating := make(chan struct{})
	var once sync.Once
	ds.onAdd = func(n *Node) {
		if string(n.Data) == "dir:a" {
			once.Do(func() {
				close(propagating)
				time.Sleep(100 * time.Millisecond)
			})
		}
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // ipfs files write /a/f
		defer wg.Done()
		f.Write([]byte(" world"))
		fmt.Println("close /a/f:", f.Close())
	}()
	go func() { // ipfs files flush /
		defer wg.Done()
		<-propagating
		fmt.Println("flush /:", root.val.Flush())
	}()
	wg.Wait()
	fmt.Println("root published as", root.last.Load())
}
