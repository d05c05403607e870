// Pattern: etcd-io/bbolt DB / Tx / node: locks are taken once at transaction
// boundaries (read tx: db.mmaplock.RLock for its lifetime; write tx: db.rwlock,
// plus mmaplock.Lock only to remap at commit); node methods (root(),
// nextSibling() via n.parent) never lock: the node tree is private to the tx.
package main

import (
	"fmt"
	"maps"
	"slices"
	"sync"
)

type DB struct {
	rwlock   sync.Mutex        // one writer at a time
	metalock sync.Mutex        // protects data/meta swap
	mmaplock sync.RWMutex      // read txs hold R; remap takes W
	data     map[string]string // immutable snapshot
	capacity int
}

type Tx struct {
	db   *DB
	root *node
}

type node struct {
	tx       *Tx
	parent   *node
	children []*node
	keys     []string
}

func (n *node) root() *node {
	if n.parent == nil {
		return n
	}
	return n.parent.root() // no lock: the tree is private to n.tx
}

func (n *node) nextSibling() *node {
	if n.parent == nil {
		return nil
	}
	i := slices.Index(n.parent.children, n)
	if i+1 < len(n.parent.children) {
		return n.parent.children[i+1]
	}
	if p := n.parent.nextSibling(); p != nil && len(p.children) > 0 {
		return p.children[0]
	}
	return nil
}

func (tx *Tx) build(data map[string]string) {
	var level []*node
	keys := slices.Sorted(maps.Keys(data))
	for i := 0; i < len(keys) || i == 0; i += 4 {
		level = append(level, &node{tx: tx, keys: keys[i:min(i+4, len(keys))]})
	}
	for len(level) > 1 {
		var up []*node
		for i := 0; i < len(level); i += 4 {
			b := &node{tx: tx, children: level[i:min(i+4, len(level))]}
			for _, c := range b.children {
				c.parent = b
			}
			up = append(up, b)
		}
		level = up
	}
	tx.root = level[0]
}

func (tx *Tx) keys() []string {
	n := tx.root
	for len(n.children) > 0 {
		n = n.children[0]
	}
	if n.root() != tx.root {
		panic("corrupt tree")
	}
	var out []string
	for ; n != nil; n = n.nextSibling() {
		out = append(out, n.keys...)
	}
	return out
}

func (db *DB) Begin(writable bool) *Tx {
	tx := &Tx{db: db}
	if writable {
		db.rwlock.Lock()
	}
	db.metalock.Lock()
	if !writable {
		db.mmaplock.RLock() // held until Rollback
	}
	snap := db.data
	db.metalock.Unlock()
	tx.build(snap)
	return tx
}

// Rollback ends a read-only transaction.
func (tx *Tx) Rollback() { tx.db.mmaplock.RUnlock() }

func (tx *Tx) CommitPut(k, v string) {
	db := tx.db
	next := map[string]string{k: v}
	for _, key := range tx.keys() {
		next[key] = db.data[key] // db.data only changes under rwlock, which we hold
	}
	if len(next) > db.capacity { // remap: wait for all read txs
		db.mmaplock.Lock()
		db.capacity *= 2
		db.mmaplock.Unlock()
	}
	db.metalock.Lock()
	db.data = next
	db.metalock.Unlock()
	db.rwlock.Unlock() // ends the write transaction
}

func main() {
	db := &DB{data: map[string]string{}, capacity: 4}
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(2)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				db.Begin(true).CommitPut(fmt.Sprintf("k%d-%02d", w, i), "v")
			}
		}(w)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				tx := db.Begin(false)
				_ = tx.keys()
				tx.Rollback()
			}
		}()
	}
	wg.Wait()
	tx := db.Begin(false)
	fmt.Println("keys", len(tx.keys()), "capacity", db.capacity)
	tx.Rollback()
}
