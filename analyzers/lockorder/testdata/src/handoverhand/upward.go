package handoverhand

import "sync"

// Walking up a tree hand over hand (`parent := i.parent; parent.mu.Lock();
// i.mu.Unlock(); i = parent`), from a node a lookup returned locked: on the
// back edge i.parent names the next node up, not the one now held, so the
// lock just taken is i's from there. One lock is held at every turn and
// released after the loop: no finding (std's HashTrieMap.LoadAndDelete).

type trieNode struct {
	mu     sync.Mutex
	parent *trieNode
	kids   int
}

type Trie struct {
	root *trieNode
	mu   sync.Mutex
}

// find returns the node locked, nil when there is none.
func (t *Trie) find(depth int) (i *trieNode, level int) {
	i = t.root
	for ; depth > 0 && i != nil; depth-- {
		i = i.parent
	}
	if i == nil {
		return nil, 0
	}
	i.mu.Lock()
	return i, depth
}

func (t *Trie) prune(depth int) bool {
	i, level := t.find(depth)
	if i == nil {
		return false
	}
	if level > 8 {
		i.mu.Unlock()
		return false
	}
	for i.parent != nil && i.kids == 0 {
		parent := i.parent
		parent.mu.Lock()
		parent.kids--
		i.mu.Unlock()
		i = parent
	}
	i.mu.Unlock()
	return true
}

// pruneLocked keeps the found node locked while it takes the trie's
// lock: trieNode.mu then Trie.mu.
func (t *Trie) pruneLocked(depth int) {
	i, _ := t.find(depth)
	if i == nil {
		return
	}
	t.mu.Lock()
	i.kids = 0
	t.mu.Unlock()
	i.mu.Unlock()
}

func (t *Trie) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.root.mu.Lock() // want `lock order inversion: trieNode.mu then Trie.mu in Trie.pruneLocked \(upward.go:58 -> upward.go:62\) but Trie.mu then trieNode.mu in Trie.reset \(upward.go:69 -> upward.go:71\) \[lock-order\]`
	t.root.kids = 0
	t.root.mu.Unlock()
}
