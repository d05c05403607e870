// Package checklocks_results: +checklocksacquire naming a result, checked
// at the function's returns and applied at call sites to the call's value.
package checklocks_results

import (
	"errors"
	"sync"
)

type conn struct {
	mu sync.Mutex
	// +checklocks:mu
	seq int
	// +checklocks:mu
	peer *conn
}

type pair struct {
	own  conn
	next *conn
}

// +checklocksacquire:c.mu
func open() (c *conn) {
	c = new(conn)
	c.mu.Lock()
	return c
}

// +checklocksacquire:c.mu
func openOrFail(ok bool) (c *conn, err error) {
	c = new(conn)
	if !ok {
		return c, errors.New("no") // want `conn.mu is declared acquired but is not held on this return path \[acquires\]`
	}
	c.mu.Lock()
	return c, nil
}

// +checklocksacquire:p.own.mu
// +checklocksacquire:p.next.mu
func openPair() (p *pair) {
	p = new(pair)
	p.next = new(conn)
	p.own.mu.Lock()
	p.next.mu.Lock()
	return p
}

// +checklocksacquire:c.mu
func forgets() (c *conn) {
	return new(conn) // want `conn.mu is declared acquired but is not held on this return path \[acquires\]`
}

func use() {
	c := open()
	c.seq++
	c.mu.Unlock()

	d, err := openOrFail(true)
	if err == nil {
		d.seq++
	}
	d.mu.Unlock()

	p := openPair()
	p.own.seq++
	p.next.seq++
	p.next.mu.Unlock()
	p.own.mu.Unlock()

	e := open()
	e.mu.Unlock()
	e.seq++ // want `write to conn.seq without holding conn.mu \[guardedby\]`
}
