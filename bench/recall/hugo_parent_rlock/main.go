// Modeled on Hugo's content tree (hugolib pageMap / contentNode, Hugo 0.7x
// server mode): a node's section lookups took the tree's RWMutex for reading
// and then asked n.parent for its path, which RLocks the same tree mutex
// again. A concurrent rebuild (file-watcher driven Insert) write-locks the
// tree between the two RLocks and everything hangs.
package main

import (
	"fmt"
	"sync"
	"time"
)

type contentTree struct {
	mu    sync.RWMutex
	nodes map[string]*contentNode
}

type contentNode struct {
	tree   *contentTree
	parent *contentNode
	key    string
}

func (n *contentNode) pathLocked() string {
	if n.parent == nil {
		return "/" + n.key
	}
	return n.parent.pathLocked() + "/" + n.key
}

// Path returns the full path of the node.
func (n *contentNode) Path() string {
	n.tree.mu.RLock()
	defer n.tree.mu.RUnlock()
	return n.pathLocked()
}

// SectionsPath returns the path of the enclosing section.
func (n *contentNode) SectionsPath() string {
	n.tree.mu.RLock()
	defer n.tree.mu.RUnlock()
	if n.parent == nil {
		return "/"
	}
	return n.parent.Path()
}

func (t *contentTree) Insert(key string, parent *contentNode) *contentNode {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := &contentNode{tree: t, parent: parent, key: key}
	t.nodes[n.pathLocked()] = n
	return n
}

func main() {
	t := &contentTree{nodes: map[string]*contentNode{}}
	section := t.Insert("blog", nil)
	page := t.Insert("first-post", section)

	go func() { // rebuild triggered by the file watcher
		for i := 0; i < 100; i++ {
			t.Insert(fmt.Sprintf("draft-%d", i), section)
		}
	}()
	go func() { // page rendering
		for i := 0; i < 100; i++ {
			_ = page.SectionsPath()
		}
	}()
	time.Sleep(50 * time.Millisecond)
}
