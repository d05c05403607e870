// Pattern: Linux fs/d_path.c rename_lock seqlock, mirrored by gVisor's
// pkg/sentry/vfs seqcount-protected mount table: first take a lock-free
// snapshot of the parent chain (atomic loads + sequence counter), then take
// the owner lock exactly once and validate the snapshot; on a race, drop the
// lock and retry. The owner lock is never held during the parent walk.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

type Tree struct {
	mu  sync.Mutex
	seq atomic.Uint64 // bumped (under mu) by every structural change
}

type Node struct {
	tree   *Tree
	name   string // immutable
	parent atomic.Pointer[Node]
	quota  int // guarded by tree.mu
	used   int // guarded by tree.mu
}

// snapshot collects n and its ancestors without locking.
func (n *Node) snapshot() ([]*Node, uint64) {
	seq := n.tree.seq.Load()
	var chain []*Node
	for cur := n; cur != nil; cur = cur.parent.Load() {
		chain = append(chain, cur)
	}
	return chain, seq
}

// Charge adds usage to n and every ancestor atomically w.r.t. moves.
func (n *Node) Charge(delta int) bool {
	for {
		chain, seq := n.snapshot()
		n.tree.mu.Lock()
		if n.tree.seq.Load() != seq { // a Move raced with the walk
			n.tree.mu.Unlock()
			continue
		}
		for _, a := range chain {
			if a.used+delta > a.quota {
				n.tree.mu.Unlock()
				return false
			}
		}
		for _, a := range chain {
			a.used += delta
		}
		n.tree.mu.Unlock()
		return true
	}
}

// Move reparents n, transferring its usage between ancestor chains.
func (n *Node) Move(newParent *Node) {
	t := n.tree
	t.mu.Lock()
	defer t.mu.Unlock()
	for a := n.parent.Load(); a != nil; a = a.parent.Load() {
		a.used -= n.used
	}
	for a := newParent; a != nil; a = a.parent.Load() {
		a.used += n.used
	}
	t.seq.Add(1)
	n.parent.Store(newParent)
	t.seq.Add(1)
}

func (n *Node) Path() string {
	chain, _ := n.snapshot()
	s := ""
	for _, a := range chain[:len(chain)-1] {
		s = "/" + a.name + s
	}
	return s
}

func main() {
	t := &Tree{}
	mk := func(name string, p *Node, quota int) *Node {
		n := &Node{tree: t, name: name, quota: quota}
		n.parent.Store(p)
		return n
	}
	root := mk("", nil, 1<<30)
	teamA, teamB := mk("a", root, 1<<20), mk("b", root, 1<<20)
	jobs := []*Node{mk("j0", teamA, 1<<20), mk("j1", teamA, 1<<20), mk("j2", teamB, 1<<20)}
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(2)
		go func(j *Node) { // charger
			defer wg.Done()
			for k := 0; k < 500; k++ {
				j.Charge(1)
				_ = j.Path()
			}
		}(j)
		go func(i int, j *Node) { // mover, takes the write lock
			defer wg.Done()
			for k := 0; k < 200; k++ {
				j.Move([]*Node{teamA, teamB}[(k+i)%2])
			}
		}(i, j)
	}
	wg.Wait()
	t.mu.Lock()
	fmt.Println("root used", root.used, "a+b", teamA.used+teamB.used)
	t.mu.Unlock()
}
