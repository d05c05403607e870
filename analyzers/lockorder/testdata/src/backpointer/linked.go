package backpointer

import "sync"

// Nodes linked to each other share their owner: every node of a content
// tree points to the tree, and a node's parent is in the same tree, so
// reading the parent's path under the tree's read lock read-locks it
// again (hugo's content tree), which deadlocks behind a waiting writer.
type contentTree struct {
	mu    sync.RWMutex
	nodes map[string]*contentNode
}

type contentNode struct {
	tree   *contentTree
	parent *contentNode
	key    string
}

func (n *contentNode) Path() string {
	n.tree.mu.RLock()
	defer n.tree.mu.RUnlock()
	return n.key
}

func (n *contentNode) SectionPath() string {
	n.tree.mu.RLock()
	defer n.tree.mu.RUnlock()
	if n.parent == nil {
		return "/"
	}
	return n.parent.Path() // want `RLock of contentTree.mu by contentNode.Path \(at linked.go:\d+\), the same lock: linked nodes share their tree \(through .parent\), while already read-locked since linked.go:\d+: deadlocks behind a waiting writer \[double-lock\]`
}

func (t *contentTree) Insert(key string, parent *contentNode) *contentNode {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := &contentNode{tree: t, parent: parent, key: key}
	t.nodes[key] = n
	return n
}

// Correct: each node's own lock, then its parent's: two locks (taken
// child first, in one order everywhere).
type dirNode struct {
	mu     sync.Mutex
	parent *dirNode
	size   int
}

func (d *dirNode) grow(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.size += n
	if d.parent != nil {
		d.parent.grow(n)
	}
}

// Correct: an owner field of the node's own type is another node, not a
// shared owner.
type entry struct {
	mu   sync.Mutex
	head *entry
	next *entry
}

func (e *entry) touch() {
	e.head.mu.Lock()
	defer e.head.mu.Unlock()
	if e.next != nil {
		e.next.head.mu.Lock()
		e.next.head.mu.Unlock()
	}
}
