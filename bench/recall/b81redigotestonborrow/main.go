// Project: garyburd/redigo, now gomodule/redigo (redis/pool.go: Pool.get, Pool.put, Pool.ActiveCount), early versions, 2013-2014 (approximate).
// Bug: Pool.get held p.mu while it popped an idle connection and ran the user's TestOnBorrow hook on it; a TestOnBorrow that reports pool statistics through p.ActiveCount (or otherwise calls back into the pool) locks p.mu again and the Get deadlocks on the pool's own mutex (the fix copies test := p.TestOnBorrow and calls it, like Dial, only after p.mu.Unlock, re-locking to decrement active when the test fails).
package main

import (
	"container/list"
	"errors"
	"fmt"
	"log"
	"sync"
	"time"
)

// Conn represents a connection to a Redis server.
type Conn interface {
	Close() error
	Err() error
	Do(commandName string, args ...interface{}) (reply interface{}, err error)
}

type fakeConn struct{ id int }

func (c *fakeConn) Close() error { return nil }
func (c *fakeConn) Err() error   { return nil }
func (c *fakeConn) Do(cmd string, args ...interface{}) (interface{}, error) {
	if cmd == "PING" {
		return "PONG", nil
	}
	return "OK", nil
}

var errPoolClosed = errors.New("redigo: connection pool closed")

// Pool maintains a pool of connections.
type Pool struct {
	Dial         func() (Conn, error)
	TestOnBorrow func(c Conn, t time.Time) error
	MaxIdle      int
	MaxActive    int
	IdleTimeout  time.Duration

	// mu protects fields defined below.
	mu     sync.Mutex
	closed bool
	active int
	idle   list.List // idle connections, most recently used at the front
}

type idleConn struct {
	c Conn
	t time.Time
}

type pooledConnection struct {
	p *Pool
	c Conn
}

func (pc *pooledConnection) Close() error {
	c := pc.c
	pc.c = nil
	return pc.p.put(c, c.Err() != nil)
}
func (pc *pooledConnection) Err() error { return pc.c.Err() }
func (pc *pooledConnection) Do(cmd string, args ...interface{}) (interface{}, error) {
	return pc.c.Do(cmd, args...)
}

// Get gets a connection from the pool.
func (p *Pool) Get() (Conn, error) {
	c, err := p.get()
	if err != nil {
		return nil, err
	}
	return &pooledConnection{p: p, c: c}, nil
}

// ActiveCount returns the number of active connections in the pool.
func (p *Pool) ActiveCount() int {
	p.mu.Lock()
	active := p.active
	p.mu.Unlock()
	return active
}

// get prunes stale connections and returns a connection from the idle list
// or creates a new connection.
func (p *Pool) get() (Conn, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errPoolClosed
	}

	// Get idle connection.
	for i, n := 0, p.idle.Len(); i < n; i++ {
		e := p.idle.Front()
		if e == nil {
			break
		}
		ic := e.Value.(idleConn)
		p.idle.Remove(e)
		if p.TestOnBorrow == nil || p.TestOnBorrow(ic.c, ic.t) == nil {
			p.mu.Unlock()
			return ic.c, nil
		}
		ic.c.Close()
		p.active--
	}

	if p.MaxActive > 0 && p.active >= p.MaxActive {
		p.mu.Unlock()
		return nil, errors.New("redigo: connection pool exhausted")
	}

	// No idle connection, create new.
	dial := p.Dial
	p.active++
	p.mu.Unlock()
	c, err := dial()
	if err != nil {
		p.mu.Lock()
		p.active--
		p.mu.Unlock()
		c = nil
	}
	return c, err
}

func (p *Pool) put(c Conn, forceClose bool) error {
	p.mu.Lock()
	if !p.closed && !forceClose {
		p.idle.PushFront(idleConn{t: time.Now(), c: c})
		if p.idle.Len() > p.MaxIdle {
			c = p.idle.Remove(p.idle.Back()).(idleConn).c
		} else {
			c = nil
		}
	}
	if c == nil {
		p.mu.Unlock()
		return nil
	}
	p.active--
	p.mu.Unlock()
	return c.Close()
}

func main() {
	nextID := 0
	var pool *Pool
	pool = &Pool{
		MaxIdle:     3,
		IdleTimeout: 240 * time.Second,
		Dial: func() (Conn, error) {
			nextID++
			return &fakeConn{id: nextID}, nil
		},
		TestOnBorrow: func(c Conn, t time.Time) error {
			if time.Since(t) < time.Minute {
				return nil
			}
			_, err := c.Do("PING")
			log.Printf("redis pool: pinged idle conn, %d active", pool.ActiveCount())
			return err
		},
	}

	c, _ := pool.Get()
	c.Do("SET", "k", "v")
	c.Close()
	// The connection sat idle for a while before the next request.
	pool.mu.Lock()
	pool.idle.Front().Value = idleConn{c: pool.idle.Front().Value.(idleConn).c, t: time.Now().Add(-2 * time.Minute)}
	pool.mu.Unlock()

	c, err := pool.Get()
	if err != nil {
		fmt.Println("get:", err)
		return
	}
	c.Do("GET", "k")
	c.Close()
	fmt.Println("done, active:", pool.ActiveCount())
}
