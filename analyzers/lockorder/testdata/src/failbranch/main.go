// Package main: in a program, the one Pool its code makes is every
// connection's handler.
package main

import (
	"errors"
	"sync"
)

// A callee that takes the caller's lock only where something fails: a
// connection reports its close error to its handler, the pool, which
// locks itself; the pool closing its connections under that lock
// deadlocks whenever a close fails (gocql's hostConnPool). The nil the
// pool passes for the reason rules out the other branch.
type ErrorHandler interface {
	HandleError(c *Conn, err error)
}

type sock struct{ broken bool }

func (s *sock) Close() error {
	if s.broken {
		return errors.New("broken pipe")
	}
	return nil
}

type Conn struct {
	s       *sock
	handler ErrorHandler
}

func (c *Conn) closeWithError(err error) {
	cerr := c.s.Close()
	if err != nil {
		c.handler.HandleError(c, err)
	} else if cerr != nil {
		c.handler.HandleError(c, cerr)
	}
}

func (c *Conn) Close() { c.closeWithError(nil) }

type Pool struct {
	mu    sync.Mutex
	conns []*Conn
}

func (p *Pool) HandleError(c *Conn, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conns = nil
}

func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close() // want `Pool.mu locked again by Conn.Close -> Conn.closeWithError -> Pool.HandleError \(at main.go:50, on the path where Close fails\), the same lock: the program makes one Pool \(at main.go:76\), while held since main.go:56: self-deadlock \[double-lock\]`
	}
}

// CloseFixed takes the connections out under the lock and closes them
// after. Silent.
func (p *Pool) CloseFixed() {
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

func NewPool() *Pool {
	p := &Pool{}
	p.conns = append(p.conns, &Conn{s: &sock{}, handler: p})
	return p
}

// A branch on the callee's own state that does not fail (a refresh when
// stale) is state the caller may rule out: edges only. Silent.
type Table struct {
	mu    sync.Mutex
	stale bool
	rows  int
}

func (t *Table) reload() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rows = 0
}

func (t *Table) rowsNow() int {
	if t.stale {
		t.reload()
	}
	return t.rows
}

func (t *Table) Count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stale = false
	return t.rowsNow()
}

func main() {
	p := NewPool()
	p.Close()
	p.CloseFixed()
	t := &Table{}
	t.Count()
}
