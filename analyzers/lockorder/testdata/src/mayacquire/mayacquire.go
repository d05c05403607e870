// Package mayacquire: a double lock through a call is reported only when
// the callee takes the lock on every path to its return.
package mayacquire

import "sync"

type Conn struct {
	mu          sync.Mutex
	isClient    bool
	renegotiate bool
	n           int
}

// handleRenegotiation locks mu only on the renegotiation path.
func (c *Conn) handleRenegotiation() error {
	if !c.isClient || !c.renegotiate {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return nil
}

func (c *Conn) handlePostHandshake() error {
	return c.handleRenegotiation()
}

// quic-style: holds mu, the callee never renegotiates here. Silent.
func (c *Conn) handleQUIC() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.handlePostHandshake()
}

// A callee that locks on every path is still a double lock.
func (c *Conn) bump() {
	if c.n > 0 {
		c.n--
	}
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
}

func (c *Conn) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bump() // want `Conn.mu locked again by Conn.bump \(at mayacquire.go:\d+\) while held since mayacquire.go:\d+: self-deadlock \[double-lock\]`
}
