// Pattern: recursive tree with per-node mutexes. A recursive method is called
// with the current node's mutex held and, only on the branch where the next
// child exists (or must be created), locks that CHILD's mutex (a different
// instance of the same type). Locks are always taken parent-before-child, and
// no node is ever locked twice on one path.
// Modelled on lock-coupling ("hand-over-hand") tries/B-trees such as the
// radix trees in etcd's/consul's indices and cockroach's interval btrees.
package main

import (
	"fmt"
	"sync"
)

type node struct {
	mu       sync.Mutex
	children map[byte]*node
	val      int
	has      bool
}

func newNode() *node { return &node{children: map[byte]*node{}} }

// insertLocked: n.mu is held on entry and released before return.
func insertLocked(n *node, key string, val int) {
	if len(key) == 0 {
		n.val, n.has = val, true
		n.mu.Unlock()
		return
	}
	child := n.children[key[0]]
	if child == nil {
		child = newNode()
		n.children[key[0]] = child
	}
	child.mu.Lock() // parent -> child order
	n.mu.Unlock()   // hand over
	insertLocked(child, key[1:], val)
}

// countLocked: n.mu is held by the caller for the whole call; each child is
// locked only if present, strictly below n, and unlocked before returning.
func countLocked(n *node) int {
	c := 0
	if n.has {
		c = 1
	}
	for _, ch := range n.children {
		ch.mu.Lock()
		c += countLocked(ch)
		ch.mu.Unlock()
	}
	return c
}

// sumPrefixLocked: n.mu held by the caller. Descends one level per byte of
// prefix, locking the next child only if it exists.
func sumPrefixLocked(n *node, prefix string) int {
	if len(prefix) == 0 {
		return sumLocked(n)
	}
	child := n.children[prefix[0]]
	if child == nil {
		return 0 // no lock taken
	}
	child.mu.Lock()
	defer child.mu.Unlock()
	return sumPrefixLocked(child, prefix[1:])
}

func sumLocked(n *node) int {
	s := 0
	if n.has {
		s = n.val
	}
	for _, ch := range n.children {
		ch.mu.Lock()
		s += sumLocked(ch)
		ch.mu.Unlock()
	}
	return s
}

type Trie struct{ root *node }

func (t *Trie) Insert(k string, v int) {
	t.root.mu.Lock()
	insertLocked(t.root, k, v)
}

func (t *Trie) Count() int {
	t.root.mu.Lock()
	defer t.root.mu.Unlock()
	return countLocked(t.root)
}

func (t *Trie) SumPrefix(p string) int {
	t.root.mu.Lock()
	defer t.root.mu.Unlock()
	return sumPrefixLocked(t.root, p)
}

func main() {
	t := &Trie{root: newNode()}
	var wg sync.WaitGroup
	words := []string{"a", "ab", "abc", "abd", "b", "ba", "bad", "bat", "c", "cab"}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i, word := range words {
				t.Insert(fmt.Sprintf("%s%d", word, w), i)
				t.SumPrefix(word[:1])
			}
		}(w)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 20; i++ {
			t.Count()
		}
	}()
	wg.Wait()
	fmt.Println("count:", t.Count(), "sum(ab):", t.SumPrefix("ab"), "sum(zz):", t.SumPrefix("zz"))
}
