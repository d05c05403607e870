package main

import "sync"

// A literal passed to a walk that holds the tree's read lock, rendering
// the pages it visits on a branch of its own; rendering asks, on a
// branch of the callee's, for the page's section, which read-locks the
// tree again (hugo's WalkBelow and CurrentSection). The literal's own
// branch is this function's code and does not count against the bound
// of conditional steps: the recursive read lock is reported on the
// paths that take it.

type pageTree struct {
	mu    sync.RWMutex
	nodes map[string]*pageNode
}

type pageNode struct {
	kind string
	tree *pageTree
}

func (t *pageTree) insert(k string, n *pageNode) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n.tree = t
	t.nodes[k] = n
}

func (t *pageTree) section(k string) *pageNode {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.nodes[k]
}

func (t *pageTree) walk(fn func(*pageNode)) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, n := range t.nodes {
		fn(n)
	}
}

func (n *pageNode) currentSection() *pageNode {
	if n.kind == "section" {
		return n
	}
	return n.tree.section("/")
}

func renderAll(t *pageTree) int {
	rendered := 0
	t.walk(func(n *pageNode) { // want `RLock of pageTree.mu by pageTree.walk -> renderAll.func1 -> pageNode.currentSection -> pageTree.section \(at literalbranch.go:\d+, on the paths that call pageTree.section\), the same lock: the program makes one pageTree .*deadlocks behind a waiting writer \[double-lock\]`
		if n.kind == "page" {
			_ = n.currentSection()
			rendered++
		}
	})
	return rendered
}

// Sections looked up before the walk: silent.
func renderAllFixed(t *pageTree) int {
	sec := t.section("/")
	rendered := 0
	t.walk(func(n *pageNode) {
		if n.kind == "page" && sec != nil {
			rendered++
		}
	})
	return rendered
}

func runPageTree() {
	t := &pageTree{nodes: map[string]*pageNode{}}
	t.insert("/", &pageNode{kind: "section"})
	go t.insert("/a", &pageNode{kind: "page"})
	_ = renderAll(t)
	_ = renderAllFixed(t)
}
