// Project: gomodule/redigo (redis/pool.go)
// Bug: with Pool.Wait set, p.cond is created as sync.NewCond(&p.mu).
// activeConn.Close -> p.put runs with p.mu held and, when the connection is
// broken, calls p.release(), which locked p.cond.L before decrementing
// p.active and signalling waiters. p.cond.L is p.mu, so the goroutine
// re-locks the mutex it already holds: self-deadlock via Cond.L.
// Fix: release() documents "the caller must hold p.mu" and no longer locks.

package main

import (
	"container/list"
	"errors"
	"fmt"
	"sync"
	"time"
)

type Conn interface {
	Do(cmd string, args ...interface{}) (interface{}, error)
	Err() error
	Close() error
}

type fakeConn struct{ err error }

func (c *fakeConn) Do(cmd string, args ...interface{}) (interface{}, error) {
	if cmd == "DEBUG" {
		c.err = errors.New("EOF")
		return nil, c.err
	}
	return "OK", nil
}
func (c *fakeConn) Err() error   { return c.err }
func (c *fakeConn) Close() error { return nil }

type idleConn struct {
	c Conn
	t time.Time
}

type Pool struct {
	Dial        func() (Conn, error)
	MaxIdle     int
	MaxActive   int
	IdleTimeout time.Duration
	Wait        bool

	mu     sync.Mutex
	cond   *sync.Cond
	closed bool
	active int
	idle   list.List
}

func (p *Pool) lazyInit() {
	if p.cond == nil {
		p.cond = sync.NewCond(&p.mu)
	}
}

func (p *Pool) Get() (*activeConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if e := p.idle.Front(); e != nil {
			ic := p.idle.Remove(e).(idleConn)
			return &activeConn{p: p, pc: ic.c}, nil
		}
		if p.closed {
			return nil, errors.New("redigo: get on closed pool")
		}
		if p.MaxActive == 0 || p.active < p.MaxActive {
			c, err := p.Dial()
			if err != nil {
				return nil, err
			}
			p.active++
			return &activeConn{p: p, pc: c}, nil
		}
		if !p.Wait {
			return nil, errors.New("redigo: connection pool exhausted")
		}
		p.lazyInit()
		p.cond.Wait()
	}
}

// release decrements the active count and signals waiters.
func (p *Pool) release() {
	p.cond.L.Lock()
	defer p.cond.L.Unlock()
	p.active--
	p.cond.Signal()
}

func (p *Pool) put(c Conn, forceClose bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed && !forceClose {
		p.idle.PushFront(idleConn{c: c, t: time.Now()})
		if p.idle.Len() <= p.MaxIdle {
			if p.cond != nil {
				p.cond.Signal()
			}
			return nil
		}
		c = p.idle.Remove(p.idle.Back()).(idleConn).c
	}
	err := c.Close()
	if p.cond != nil {
		p.release()
	} else {
		p.active--
	}
	return err
}

type activeConn struct {
	p  *Pool
	pc Conn
}

func (ac *activeConn) Do(cmd string, args ...interface{}) (interface{}, error) {
	return ac.pc.Do(cmd, args...)
}

func (ac *activeConn) Close() error {
	return ac.p.put(ac.pc, ac.pc.Err() != nil)
}

func main() {
	pool := &Pool{MaxIdle: 1, MaxActive: 1, Wait: true, IdleTimeout: time.Minute,
		Dial: func() (Conn, error) { return &fakeConn{}, nil }}

	c1, _ := pool.Get()
	got := make(chan error)
	go func() { // second client waits for the only connection
		c2, err := pool.Get()
		if err == nil {
			_, err = c2.Do("PING")
			c2.Close()
		}
		got <- err
	}()
	time.Sleep(20 * time.Millisecond)
	c1.Do("DEBUG", "SEGFAULT") // server drops the connection
	c1.Close()
	fmt.Println("second client:", <-got)
}
