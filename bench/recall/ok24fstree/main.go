// Pattern: an in-memory directory tree built from nodes of a single type.
// Locks are always acquired top-down (parent before child, by tree level),
// both for hand-over-hand path walks and for recursive size aggregation.
// A package logger is called under node locks with %p and plain fields.
package main

import (
	"fmt"
	"os"
	"strings"
	"sync"
)

type Logger interface {
	Printf(format string, args ...any)
}

type bufLogger struct {
	mu sync.Mutex
	n  int
}

func (l *bufLogger) Printf(format string, args ...any) {
	_ = fmt.Sprintf(format, args...)
	l.mu.Lock()
	l.n++
	l.mu.Unlock()
}

type Node struct {
	mu       sync.Mutex
	name     string
	depth    int
	size     int64
	children map[string]*Node
	log      Logger
}

func newNode(name string, depth int, log Logger) *Node {
	return &Node{name: name, depth: depth, children: map[string]*Node{}, log: log}
}

// childLocked must hold n.mu.
func (n *Node) childLocked(name string) *Node {
	c, ok := n.children[name]
	if !ok {
		c = newNode(name, n.depth+1, n.log)
		n.children[name] = c
		n.log.Printf("mkdir %s depth=%d parent=%p", name, c.depth, n)
	}
	return c
}

// Write adds size bytes to the file at path, creating directories as needed.
// Hand-over-hand: the child is locked before the parent is released.
func (n *Node) Write(path string, size int64) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	cur := n
	cur.mu.Lock()
	for _, p := range parts {
		next := cur.childLocked(p)
		next.mu.Lock()
		cur.mu.Unlock()
		cur = next
	}
	cur.size += size
	cur.log.Printf("write %s +%d total=%d", cur.name, size, cur.size)
	cur.mu.Unlock()
}

// Total returns the size of n and all descendants, locking parent then child.
func (n *Node) Total() int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	t := n.size
	for _, c := range n.children {
		t += c.Total()
	}
	return t
}

// Count returns the number of nodes beneath n (inclusive).
func (n *Node) Count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := 1
	for _, ch := range n.children {
		c += ch.Count()
	}
	return c
}

func main() {
	log := &bufLogger{}
	root := newNode("/", 0, log)

	var wg sync.WaitGroup
	var want int64
	for w := 0; w < 6; w++ {
		for i := 0; i < 40; i++ {
			want += int64(i + 1)
		}
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				path := fmt.Sprintf("/srv/app%d/logs/%d.log", i%3, (w+i)%5)
				root.Write(path, int64(i+1))
				if i%10 == 0 {
					_ = root.Total()
				}
			}
		}(w)
	}
	wg.Wait()

	if got := root.Total(); got != want {
		fmt.Println("size mismatch", got, want)
		os.Exit(1)
	}
	log.mu.Lock()
	lines := log.n
	log.mu.Unlock()
	fmt.Println("total:", root.Total(), "nodes:", root.Count(), "log lines:", lines)
}
