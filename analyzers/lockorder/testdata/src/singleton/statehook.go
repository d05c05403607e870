package main

import "sync"

// A func variable that a goroutine's closure also captures lives in a
// cell, read through its address: the call through it runs what was
// stored into it, here the one state hook a pool registered, whose
// receiver is the one pool the program makes.

type clientConn struct {
	mu   sync.Mutex
	hook func(*clientConn)
	open bool
}

func (c *clientConn) pickHook() func(*clientConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.open {
		return nil
	}
	return c.hook
}

func (c *clientConn) runStateHook() {
	h := c.pickHook()
	if h == nil {
		return
	}
	h(c)
	if h = c.pickHook(); h != nil {
		go func() {
			for h != nil {
				h(c)
				h = nil
			}
		}()
	}
}

func (c *clientConn) Reserve() {
	defer c.runStateHook()
}

type connPool struct {
	mu    sync.Mutex
	conn  *clientConn
	ready int
}

func (p *connPool) stateHook(*clientConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ready++
}

func (p *connPool) reserve() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conn.Reserve() // want `connPool.mu locked again by clientConn.Reserve -> clientConn.runStateHook -> connPool.stateHook .*the program makes one connPool`
}

// Correct: the pool reserves after letting its lock go.
type idleConn struct {
	hook func(*idleConn)
}

func (c *idleConn) Reserve() {
	h := c.hook
	if h == nil {
		return
	}
	go func() { h(c) }()
	h(c)
}

type idlePool struct {
	mu    sync.Mutex
	conn  *idleConn
	ready int
}

func (p *idlePool) stateHook(*idleConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ready++
}

func (p *idlePool) reserve() {
	p.mu.Lock()
	c := p.conn
	p.mu.Unlock()
	c.Reserve()
}

func runStateHooks() {
	c := &clientConn{open: true}
	p := &connPool{conn: c}
	c.hook = p.stateHook
	p.reserve()

	d := &idleConn{}
	q := &idlePool{conn: d}
	d.hook = q.stateHook
	q.reserve()
}
