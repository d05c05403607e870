// Pattern: HashiCorp go-memdb / go-immutable-radix: writers serialize on the
// owner's write mutex and publish copy-on-write snapshots via atomic pointers;
// readers (and writers that need a path while holding the lock) walk parent
// and child links using only atomic loads of immutable data, never the lock.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

type Tree struct {
	writeMu sync.Mutex
	root    *Node
	events  []string // guarded by writeMu
}

type Meta struct { // immutable once published
	Version int
	Owner   string
}

type Node struct {
	tree     *Tree
	name     string // immutable
	parent   atomic.Pointer[Node]
	children atomic.Pointer[map[string]*Node] // COW map
	meta     atomic.Pointer[Meta]
}

func newNode(t *Tree, name string) *Node {
	n := &Node{tree: t, name: name}
	m := map[string]*Node{}
	n.children.Store(&m)
	n.meta.Store(&Meta{})
	return n
}

// Path walks parent links lock-free.
func (n *Node) Path() string {
	p := n.parent.Load()
	if p == nil {
		return ""
	}
	return p.Path() + "/" + n.name
}

func (n *Node) Lookup(name string) *Node { return (*n.children.Load())[name] }

// Insert copies the child map under the write lock and publishes it.
func (n *Node) Insert(name string) *Node {
	n.tree.writeMu.Lock()
	defer n.tree.writeMu.Unlock()
	old := *n.children.Load()
	if c, ok := old[name]; ok {
		return c
	}
	c := newNode(n.tree, name)
	c.parent.Store(n)
	m := make(map[string]*Node, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[name] = c
	n.children.Store(&m)
	n.tree.events = append(n.tree.events, "insert "+c.Path()) // lock-free walk under writeMu
	return c
}

// SetOwner publishes a new immutable Meta; the event path walks parents
// (n.parent.Path()) while writeMu is held, which is fine: Path never locks.
func (n *Node) SetOwner(owner string) {
	n.tree.writeMu.Lock()
	defer n.tree.writeMu.Unlock()
	old := n.meta.Load()
	n.meta.Store(&Meta{Version: old.Version + 1, Owner: owner})
	if p := n.parent.Load(); p != nil {
		n.tree.events = append(n.tree.events, "chown "+p.Path()+"/"+n.name)
	}
}

// EffectiveOwner walks up until a node with an owner is found, lock-free.
func (n *Node) EffectiveOwner() string {
	for cur := n; cur != nil; cur = cur.parent.Load() {
		if m := cur.meta.Load(); m.Owner != "" {
			return m.Owner
		}
	}
	return "root"
}

func main() {
	t := &Tree{}
	t.root = newNode(t, "")
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				d := t.root.Insert(fmt.Sprintf("ns%d", i%3))
				c := d.Insert(fmt.Sprintf("obj%d", i%10))
				if i%5 == w%5 {
					d.SetOwner(fmt.Sprintf("team%d", w))
				}
				_ = c.EffectiveOwner()
			}
		}(w)
	}
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				if d := t.root.Lookup("ns1"); d != nil {
					for _, c := range *d.children.Load() {
						_ = c.Path() + c.EffectiveOwner()
					}
				}
			}
		}()
	}
	wg.Wait()
	fmt.Println(len(t.events) > 0, t.root.Lookup("ns0").Lookup("obj0").Path())
}
