// Pattern: Go standard library context.cancelCtx.cancel(removeFromParent
// bool, err, cause) (src/context/context.go). cancel locks c.mu, cancels each
// child with child.cancel(false, ...) - which locks the *child's* mutex and,
// because removeFromParent is false, never touches the parent - then unlocks
// c.mu and only afterwards, `if removeFromParent`, locks the parent's mutex
// in removeChild. Locks are only nested parent -> child (a tree).
package main

import (
	"errors"
	"fmt"
	"sync"
)

var Canceled = errors.New("context canceled")

type cancelCtx struct {
	name     string
	parent   *cancelCtx
	mu       sync.Mutex
	children map[*cancelCtx]struct{}
	done     chan struct{}
	err      error
}

func newCtx(parent *cancelCtx, name string) *cancelCtx {
	c := &cancelCtx{name: name, parent: parent, done: make(chan struct{})}
	if parent != nil {
		parent.mu.Lock()
		if parent.err != nil {
			parent.mu.Unlock()
			c.cancel(false, parent.err) // parent already canceled
			return c
		}
		if parent.children == nil {
			parent.children = map[*cancelCtx]struct{}{}
		}
		parent.children[c] = struct{}{}
		parent.mu.Unlock()
	}
	return c
}

func removeChild(parent, child *cancelCtx) {
	if parent == nil {
		return
	}
	parent.mu.Lock()
	if parent.children != nil {
		delete(parent.children, child)
	}
	parent.mu.Unlock()
}

func (c *cancelCtx) cancel(removeFromParent bool, err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return // already canceled
	}
	c.err = err
	close(c.done)
	for child := range c.children {
		// NOTE: acquiring the child's lock while holding parent's lock.
		child.cancel(false, err)
	}
	c.children = nil
	c.mu.Unlock()

	if removeFromParent {
		removeChild(c.parent, c)
	}
}

func (c *cancelCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func main() {
	root := newCtx(nil, "root")
	var leaves []*cancelCtx
	for i := 0; i < 3; i++ {
		mid := newCtx(root, fmt.Sprintf("mid%d", i))
		for j := 0; j < 3; j++ {
			leaves = append(leaves, newCtx(mid, fmt.Sprintf("leaf%d.%d", i, j)))
		}
	}
	var wg sync.WaitGroup
	for _, l := range leaves {
		wg.Add(1)
		go func() { defer wg.Done(); l.cancel(true, Canceled) }() // CancelFunc
		_ = newCtx(l, "late")
	}
	wg.Add(1)
	go func() { defer wg.Done(); root.cancel(true, Canceled) }()
	wg.Wait()
	for _, l := range leaves {
		<-l.done
	}
	fmt.Println("root:", root.Err(), "leaf0:", leaves[0].Err())
}
