// Package handoverhand: lock coupling down a linked list holds one lock
// at every loop header under the name of the phi that carries it (first
// the head, then the last turn's node): unlocking prev lets go of the
// lock the previous turn took as cur.
package handoverhand

import "sync"

type node struct {
	mu   sync.Mutex
	key  int
	next *node
}

type List struct {
	head *node // a sentinel
}

// locate returns prev and cur locked, cur nil at the end. Silent.
func (l *List) locate(key int) (prev, cur *node) {
	prev = l.head
	prev.mu.Lock()
	cur = prev.next
	for cur != nil {
		cur.mu.Lock()
		if cur.key >= key {
			return prev, cur
		}
		prev.mu.Unlock()
		prev, cur = cur, cur.next
	}
	return prev, nil
}

// Len couples down the list and lets go of the last node. Silent.
func (l *List) Len() int {
	n := 0
	prev := l.head
	prev.mu.Lock()
	for cur := prev.next; cur != nil; cur = cur.next {
		cur.mu.Lock()
		prev.mu.Unlock()
		prev = cur
		n++
	}
	prev.mu.Unlock()
	return n
}

// Delete uses locate and unlocks both. Silent.
func (l *List) Delete(key int) bool {
	prev, cur := l.locate(key)
	found := cur != nil && cur.key == key
	if found {
		prev.next = cur.next
	}
	if cur != nil {
		cur.mu.Unlock()
	}
	prev.mu.Unlock()
	return found
}

// Contains returns from inside the loop with cur still locked.
func (l *List) Contains(key int) bool { // want `the function returns with different locks held on different paths: node.mu \(taken at list.go:69\) held on some return paths only \[inconsistent-return\]`
	prev := l.head
	prev.mu.Lock()
	for cur := prev.next; cur != nil; cur = cur.next {
		cur.mu.Lock()
		prev.mu.Unlock()
		if cur.key == key {
			return true // cur still locked
		}
		prev = cur
	}
	prev.mu.Unlock()
	return false
}
