// Project: SpiceDB (authzed/spicedb) through its BDD dependency rudd
// (github.com/dalzilio/rudd) at commit 0a0cd32 (2023), which carries the
// thread-safety locking Authzed contributed in dalzilio/rudd PR #1.
// Files/functions: rudd hudd.go (tables.allnodesfrom, tables.ismarked,
// tables.marknode, tables.unmarknode, the nodefinalizer installed by New),
// hkernel.go (markrec, unmarkall, retnode), BDD.Allnodes.
// Issue: authzed/spicedb#1485 "WriteSchema can deadlock".
//
// The node table embeds a sync.RWMutex. allnodesfrom read-locks it for the
// whole walk: markrec marks the nodes reachable from the roots, then the scan
// calls the user's callback for each marked node. But markrec and the scan
// call ismarked, marknode and unmarknode, each of which read-locks the same
// RWMutex again. The writer is the finalizer rudd attaches to every Node it
// hands out (retnode): when the GC collects a Node, the finalizer write-locks
// the table to decrement its reference count. If it runs between two of the
// walk's read locks (here, while the callback works on a node), its Lock
// waits for the outer read lock and the next nested RLock waits behind it;
// the schema write and the finalizer goroutine both stop. The fix makes the
// mark helpers rely on the lock their callers already hold.
package main

import (
	"fmt"
	"sync"
	"time"
)

type huddnode struct {
	level  int32 // Order of the variable in the BDD
	low    int   // Reference to the false branch
	high   int   // Reference to the true branch
	refcou int32 // Count the number of external references
}

type tables struct {
	sync.RWMutex
	nodes         []huddnode
	unique        map[[3]int]int
	freepos       int
	freenum       int
	produced      int
	nodefinalizer interface{}
}

// The caller holds the table lock.
func (b *tables) ismarked(n int) bool {
	return (b.nodes[n].refcou & 0x200000) != 0
}

// The caller holds the table lock.
func (b *tables) marknode(n int) {
	b.nodes[n].refcou |= 0x200000
}

// The caller holds the table lock.
func (b *tables) unmarknode(n int) {
	b.nodes[n].refcou &= 0x1FFFFF
}

func (b *tables) setnode(level int32, low int, high int, count int32) int {
	b.Lock()
	defer b.Unlock()
	b.freenum--
	b.unique[[3]int{int(level), low, high}] = b.freepos
	res := b.freepos
	b.freepos = b.nodes[b.freepos].high
	b.nodes[res] = huddnode{level, low, high, count}
	return res
}

func (b *tables) makenode(level int32, low int, high int) int {
	if low == high {
		return low
	}
	if res, ok := b.unique[[3]int{int(level), low, high}]; ok {
		return res
	}
	b.produced++
	return b.setnode(level, low, high, 0)
}

func (b *tables) markrec(n int) {
	if n < 2 || b.ismarked(n) || (b.nodes[n].low == -1) {
		return
	}
	b.marknode(n)
	b.markrec(b.nodes[n].low)
	b.markrec(b.nodes[n].high)
}

func (b *tables) unmarkall() {
	for k, v := range b.nodes {
		if k < 2 || !b.ismarked(k) || (v.low == -1) {
			continue
		}
		b.unmarknode(k)
	}
}

type Node *int

func (b *tables) allnodesfrom(f func(id, level, low, high int) error, n []Node) error {
	b.RLock()
	defer b.RUnlock()
	for _, v := range n {
		b.markrec(*v)
	}
	for k := range b.nodes {
		if b.ismarked(k) {
			b.unmarknode(k)
			if err := f(k, int(b.nodes[k].level), b.nodes[k].low, b.nodes[k].high); err != nil {
				b.unmarkall()
				return err
			}
		}
	}
	return nil
}

// BDD is the user-facing handle; the node table is embedded.
type BDD struct {
	varnum int32
	varset [][2]int
	*tables
}

func New(varnum int, nodesize int) *BDD {
	b := &BDD{varnum: int32(varnum), varset: make([][2]int, varnum)}
	impl := &tables{nodes: make([]huddnode, nodesize), unique: map[[3]int]int{}}
	for k := range impl.nodes {
		impl.nodes[k] = huddnode{level: 0, low: -1, high: k + 1}
	}
	impl.nodes[nodesize-1].high = 0
	impl.nodes[0] = huddnode{level: int32(varnum), low: 0, high: 0, refcou: 0x7FF}
	impl.nodes[1] = huddnode{level: int32(varnum), low: 1, high: 1, refcou: 0x7FF}
	impl.freepos = 2
	impl.freenum = nodesize - 2
	for k := 0; k < varnum; k++ {
		v0 := impl.makenode(int32(k), 0, 1)
		v1 := impl.makenode(int32(k), 1, 0)
		b.varset[k] = [2]int{v0, v1}
	}
	impl.nodefinalizer = func(n *int) {
		b.Lock()
		defer b.Unlock()
		impl.nodes[*n].refcou--
	}
	b.tables = impl
	return b
}

// retnode hands a node out; rudd also sets b.nodefinalizer on it with
// runtime.SetFinalizer.
func (b *BDD) retnode(n int) Node {
	x := n
	b.nodes[n].refcou++
	return &x
}

func (b *BDD) Ithvar(i int) Node { return b.retnode(b.varset[i][0]) }

// And is a shortcut for Apply(l, r, OPand) good enough for two variables.
func (b *BDD) And(l, r Node) Node { return b.retnode(b.makenode(b.nodes[*l].level, 0, *r)) }

// Allnodes iterates over all the nodes accessible from the nodes in n.
func (b *BDD) Allnodes(f func(id, level, low, high int) error, n ...Node) error {
	return b.allnodesfrom(f, n)
}

func main() {
	bdd := New(3, 16)
	expr := bdd.And(bdd.Ithvar(0), bdd.Ithvar(2))
	dropped := bdd.Ithvar(1) // a node the schema compiler no longer references

	gcRan := make(chan struct{})
	firstNode := make(chan struct{})
	// The runtime's finalizer goroutine, once the GC has collected dropped.
	go func() {
		<-firstNode
		bdd.nodefinalizer.(func(*int))(dropped)
		close(gcRan)
	}()

	// WriteSchema: walk the reachable nodes of the compiled expression.
	var ids []int
	err := bdd.Allnodes(func(id, level, low, high int) error {
		if len(ids) == 0 {
			close(firstNode)
			time.Sleep(50 * time.Millisecond) // recording the node
		}
		ids = append(ids, id)
		return nil
	}, expr)
	<-gcRan
	fmt.Println("nodes:", ids, "err:", err)
}
