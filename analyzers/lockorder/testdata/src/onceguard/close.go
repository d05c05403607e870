// Package onceguard: a function that does its work once per object
// (`if t.closed { return }; t.closed = true; ...`) takes what the work
// takes on its first call, which is the call that matters: a double lock
// through it is reported. A flag the function does not set itself is an
// ordinary branch.
package onceguard

import (
	"sync"
	"sync/atomic"
)

// Owner is told when its transport goes away.
type Owner interface{ OnClose() }

type transport struct {
	mu     sync.Mutex
	closed bool
	owner  Owner
}

func (t *transport) Close() {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.closed = true
	t.mu.Unlock()
	t.owner.OnClose()
}

type conn struct {
	mu sync.Mutex
	tr *transport
	up bool
}

func newConn() *conn {
	c := &conn{}
	c.tr = &transport{owner: c}
	return c
}

func (c *conn) OnClose() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.up = false
}

// tearDown closes the transport under the lock its owner's OnClose takes.
func (c *conn) tearDown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.up = false
	c.tr.Close() // want `conn.mu locked again by transport.Close -> conn.OnClose \(at close.go:\d+\) while held since close.go:\d+: self-deadlock \[double-lock\]`
}

// tearDownFixed lets the lock go first. Silent.
func (c *conn) tearDownFixed() {
	c.mu.Lock()
	tr := c.tr
	c.up = false
	c.mu.Unlock()
	tr.Close()
}

// A compare-and-swap guard, and a state compared with a constant.
type pool struct {
	mu      sync.Mutex
	stopped int32
	state   int
	n       int
}

const stopping = 2

func (p *pool) stopOnce() {
	if !atomic.CompareAndSwapInt32(&p.stopped, 0, 1) {
		return
	}
	p.mu.Lock()
	p.n = 0
	p.mu.Unlock()
}

func (p *pool) drainOnce() {
	if p.state == stopping {
		return
	}
	p.state = stopping
	p.mu.Lock()
	p.n = 0
	p.mu.Unlock()
}

func (p *pool) shutdown() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopOnce() // want `pool.mu locked again by pool.stopOnce \(at close.go:\d+\) while held since close.go:\d+: self-deadlock \[double-lock\]`
}

func (p *pool) drain() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drainOnce() // want `pool.mu locked again by pool.drainOnce \(at close.go:\d+\) while held since close.go:\d+: self-deadlock \[double-lock\]`
}
