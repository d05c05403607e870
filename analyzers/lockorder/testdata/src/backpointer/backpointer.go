// Package backpointer: two paths that name the same field of one type,
// where the package hands the field's object from one value to another
// (a child gets its parent's tree), are probably one lock: a recursive
// read lock through them deadlocks behind a waiting writer.
package backpointer

import "sync"

type Tree struct {
	mu   sync.RWMutex
	root *Node
}

type Node struct {
	tree     *Tree
	children []*Node
	val      int
}

func NewTree() *Tree {
	t := &Tree{}
	t.root = &Node{tree: t}
	return t
}

// add gives the child its parent's tree.
func (t *Tree) add(parent *Node, v int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	parent.children = append(parent.children, &Node{tree: parent.tree, val: v})
}

func (n *Node) Value() int {
	n.tree.mu.RLock()
	defer n.tree.mu.RUnlock()
	return n.val
}

// Sum read-locks the tree, then each child read-locks its tree, the same.
func (n *Node) Sum() int {
	n.tree.mu.RLock()
	defer n.tree.mu.RUnlock()
	s := n.val
	for _, c := range n.children {
		s += c.Value() // want `RLock of Tree.mu by Node.Value .*, the same lock through Node.tree, which the package copies from object to object`
	}
	return s
}

// SumLocked reads the children's values directly. Silent.
func (n *Node) SumLocked() int {
	n.tree.mu.RLock()
	defer n.tree.mu.RUnlock()
	s := n.val
	for _, c := range n.children {
		s += c.val
	}
	return s
}

// Pair's two stores are independent: each gets its own store object.
// Silent.
type Store struct{ mu sync.RWMutex }

type Pair struct {
	left, right *Store
}

type Holder struct{ store *Store }

func NewPair() *Pair { return &Pair{left: &Store{}, right: &Store{}} }

func (p *Pair) copyLocked(h, g *Holder) {
	h.store.mu.RLock()
	defer h.store.mu.RUnlock()
	g.store.mu.RLock()
	g.store.mu.RUnlock()
}

var _ = []any{NewTree, (*Tree).add, (*Node).Sum, (*Node).SumLocked, NewPair, (*Pair).copyLocked}
