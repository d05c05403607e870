// Package tworoles: one type in two roles. A Store is a node's private log
// (Node.wal) and a table's data (Table.data): one lock class, but the
// package never puts one field's object into the other, so edges through
// the two fields never meet in a cycle. A field that can hold the other's
// object (Cache.backing = n.wal) still can.
package tworoles

import "sync"

type Store struct {
	mu   sync.Mutex
	data map[string]string
}

func newStore() *Store { return &Store{data: map[string]string{}} }

func (s *Store) Put(k, v string) {
	s.mu.Lock()
	s.data[k] = v
	s.mu.Unlock()
}

type Node struct {
	mu  sync.Mutex
	wal *Store
}

func NewNode() *Node { return &Node{wal: newStore()} }

// Apply: Node.mu, then the node's own log.
func (n *Node) Apply(k, v string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.wal.Put(k, v)
}

type Table struct {
	data *Store
	node *Node
}

func NewTable(n *Node, data *Store) *Table { return &Table{data: data, node: n} }

func NewDefaultTable(n *Node) *Table { return NewTable(n, newStore()) }

// Flush: the table's data store, then the node. Silent: t.data is never
// a node's log.
func (t *Table) Flush() {
	t.data.mu.Lock()
	defer t.data.mu.Unlock()
	t.node.Apply("flushed", "1")
}

// A cache over the node's own log: Cache.backing holds Node.wal's object.
type Cache struct {
	backing *Store
	owner   *Node
}

func NewCache(n *Node) *Cache { return &Cache{backing: n.wal, owner: n} }

// Sync: the node's log, then the node, which takes its log again: an
// inversion with Apply on the same objects, and a self-deadlock when the
// cache's node is the one whose log it holds.
func (c *Cache) Sync() {
	c.backing.mu.Lock()
	defer c.backing.mu.Unlock()
	c.owner.Apply("synced", "1") // want `lock order inversion: Node.mu then Store.mu in Node.Apply .* but Store.mu then Node.mu in Cache.Sync` `Store.mu locked again by Node.Apply -> Store.Put .*, the same lock through Cache.backing, which the package copies from object to object .*: self-deadlock`
}
