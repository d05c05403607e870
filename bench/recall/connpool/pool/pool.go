// Package pool is a small connection pool in the style of database/sql's
// DB.conn / DB.putConn split: the pool mutex guards the idle list and the
// per-connection mutex guards connection state. The two are never nested.
package pool

import (
	"errors"
	"sync"
)

// ErrClosed is returned by Get after Close.
var ErrClosed = errors.New("pool: closed")

// Conn is a pooled connection.
type Conn struct {
	ID int

	mu     sync.Mutex // guards below
	inUse  bool
	broken bool
	uses   int
}

// Exec simulates a round trip on the connection.
func (c *Conn) Exec(fail bool) {
	c.mu.Lock()
	c.uses++
	if fail {
		c.broken = true
	}
	c.mu.Unlock()
}

// Pool hands out connections.
type Pool struct {
	mu     sync.Mutex // guards below
	idle   []*Conn
	nextID int
	closed bool
	opened int
}

// Get returns an idle connection or dials a new one.
func (p *Pool) Get() (*Conn, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	var c *Conn
	if n := len(p.idle); n > 0 {
		c = p.idle[n-1]
		p.idle = p.idle[:n-1]
	} else {
		p.nextID++
		p.opened++
		c = &Conn{ID: p.nextID}
	}
	p.mu.Unlock()

	// Pool lock released before touching the conn.
	c.mu.Lock()
	c.inUse = true
	c.mu.Unlock()
	return c, nil
}

// Put returns c to the pool unless it is broken.
func (p *Pool) Put(c *Conn) {
	c.mu.Lock()
	c.inUse = false
	broken := c.broken
	c.mu.Unlock()

	// Conn lock released before taking the pool lock.
	p.mu.Lock()
	defer p.mu.Unlock()
	if broken {
		p.opened--
		return
	}
	if !p.closed {
		p.idle = append(p.idle, c)
	}
}

// Close drops all idle connections.
func (p *Pool) Close() int {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, c := range idle {
		c.mu.Lock()
		c.broken = true
		c.mu.Unlock()
	}
	return len(idle)
}
