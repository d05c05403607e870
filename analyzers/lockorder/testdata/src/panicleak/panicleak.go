// Package panicleak: a panic with a lock held leaves the lock locked when
// a caller recovers and the program goes on (hugo #7191).
package panicleak

import (
	"fmt"
	"sync"
)

type Changes struct {
	mu     sync.RWMutex
	leaf   map[string]bool
	branch map[string]bool
}

// add panics on an unexpected kind with mu held.
func (c *Changes) add(dir string, kind int) {
	c.mu.Lock()
	switch kind {
	case 1:
		c.leaf[dir] = true
	case 2:
		c.branch[dir] = true
	default:
		panic("invalid bundle type") // want `Changes.mu taken at panicleak.go:\d+ is still held when this panics, and Builder.collect recovers the panic \(at panicleak.go:\d+\): the program goes on with Changes.mu locked, and its next Lock blocks for good \[lock-leak\]`
	}
	c.mu.Unlock()
}

// addDeferred lets the lock go in a defer, which runs on the panic too.
// Silent.
func (c *Changes) addDeferred(dir string, kind int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if kind != 1 {
		panic("invalid bundle type")
	}
	c.leaf[dir] = true
}

// addUnlocked unlocks before it panics (the fix). Silent.
func (c *Changes) addUnlocked(dir string, kind int) {
	c.mu.Lock()
	if kind != 1 {
		c.mu.Unlock()
		panic("invalid bundle type")
	}
	c.leaf[dir] = true
	c.mu.Unlock()
}

func (c *Changes) resolve(dir string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.leaf[dir] || c.branch[dir]
}

type Builder struct{ changes *Changes }

// collect turns a panic of the collection into an error and goes on.
func (b *Builder) collect(dirs map[string]int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("collect: %v", r)
		}
	}()
	for dir, kind := range dirs {
		b.changes.add(dir, kind)
		b.changes.addDeferred(dir, kind)
		b.changes.addUnlocked(dir, kind)
	}
	return nil
}

func (b *Builder) Rebuild(dirs map[string]int) bool {
	_ = b.collect(dirs)
	return b.changes.resolve("x")
}

// Index panics under its lock, but nothing in the package recovers a
// panic there: the program dies, nothing waits. Silent.
type Index struct {
	mu   sync.Mutex
	keys map[string]int
}

func (x *Index) put(k string, v int) {
	x.mu.Lock()
	if v < 0 {
		panic("negative")
	}
	x.keys[k] = v
	x.mu.Unlock()
}

// A goroutine started under the recover is not covered by it. Silent.
func (b *Builder) Background(x *Index) {
	defer func() { _ = recover() }()
	go x.put("k", -1)
}
