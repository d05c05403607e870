// Package deepchain: a lock taken only several conditional calls away
// (a debug trace path) gives callers no order edge.
package deepchain

import "sync"

var debug bool

type Named struct {
	mu   sync.Mutex
	ctx  *Context
	done bool
}

type Context struct {
	mu  sync.Mutex
	ids map[*Named]int
}

// unpack: Named.mu then Context.mu, directly.
func (n *Named) unpack() {
	if n.done {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.ctx.getID(n)
	n.done = true
}

func (c *Context) getID(n *Named) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ids[n]
}

// update holds Context.mu and compares; the comparison reaches
// Named.unpack only through three conditional steps. Silent.
func (c *Context) update(a, b *Named) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return identical(a, b)
}

func identical(a, b *Named) bool {
	if a == b {
		return true
	}
	return subst(a)
}

func subst(a *Named) bool {
	if a.done {
		return false
	}
	return trace(a)
}

func trace(a *Named) bool {
	if debug {
		a.unpack()
	}
	return false
}
