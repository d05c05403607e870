package guardclause

import "sync"

// `if c.err != nil { return c.err }` returns the error it found: a guard
// clause like `if err != nil { return err }`, though the field is loaded
// twice. What follows is the function's work on every path where it does
// any (a connection flushing under the lock its writer holds).

type Conn struct {
	mu      sync.Mutex
	err     error
	pending []byte
}

func (c *Conn) flush() error {
	if c.err != nil {
		return c.err
	}
	c.mu.Lock()
	c.pending = c.pending[:0]
	c.mu.Unlock()
	return nil
}

func (c *Conn) Write(p []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = append(c.pending, p...)
	return c.flush() // want `Conn.mu locked again by Conn.flush \(at fieldguard.go:\d+\) while held since fieldguard.go:\d+: self-deadlock`
}

// A state check that returns success is no guard clause: what it tests
// is the caller's to rule out under the lock.
func (c *Conn) drain() error {
	if c.pending == nil {
		return nil
	}
	c.mu.Lock()
	c.pending = nil
	c.mu.Unlock()
	return nil
}

func (c *Conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.drain()
}
