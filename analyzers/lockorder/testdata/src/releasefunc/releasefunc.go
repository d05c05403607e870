// Package releasefunc: helpers that lock and return the function that
// unlocks, as a closure or as the lock's own method value. The returned
// function takes the unlock over, whichever form it has: the helper leaves
// nothing held for its caller, and a caller that runs the release (deferred,
// directly, or `defer c.lock()()`) leaves nothing held either.
package releasefunc

import "sync"

type Client struct {
	mu    sync.Mutex
	conns int
}

func (c *Client) inc() {
	c.mu.Lock()
	c.conns++
	c.mu.Unlock()
}

func (c *Client) lockClosure() func() {
	c.mu.Lock()
	return func() { c.mu.Unlock() }
}

func (c *Client) lockValue() func() {
	c.mu.Lock()
	return c.mu.Unlock
}

func (c *Client) lockPair() (*Client, func()) {
	c.mu.Lock()
	return c, c.mu.Unlock
}

func (c *Client) deferValue() {
	unlock := c.lockValue()
	defer unlock()
	c.conns++
}

func (c *Client) deferCall() {
	defer c.lockValue()()
	c.conns++
}

func (c *Client) direct() {
	unlock := c.lockValue()
	c.conns++
	unlock()
}

func (c *Client) pair() {
	cl, unlock := c.lockPair()
	cl.conns++
	unlock()
}

func (c *Client) closure() {
	defer c.lockClosure()()
	c.conns++
}

// Each helper returns with nothing held: no call here is a double lock.
func sequence(c *Client) {
	c.deferValue()
	c.inc()
	c.deferCall()
	c.inc()
	c.direct()
	c.inc()
	c.pair()
	c.inc()
	c.closure()
	c.inc()
}

// A method value kept locally is still the lock's unlock, called later.
func localValue(c *Client) {
	c.mu.Lock()
	unlock := c.mu.Unlock
	c.inc() // want `Client.mu locked again by Client.inc \(at releasefunc.go:16\) while held since releasefunc.go:80: self-deadlock \[double-lock\]`
	unlock()
}
