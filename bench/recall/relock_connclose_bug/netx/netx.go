// Package netx is a toy client connection that reports state changes to a
// Handler while holding its mutex (like nats.Conn invoking handlers, or a
// gRPC balancer state update, done synchronously under the conn lock).
package netx

import "sync"

// State of a connection.
type State int

// Connection states.
const (
	Connected State = iota
	Disconnected
	Closed
)

// Handler is implemented by importers; it receives the Conn itself.
type Handler interface {
	Handle(c *Conn, s State)
}

// Conn is a client connection.
type Conn struct {
	URL   string
	mu    sync.Mutex
	state State
	h     Handler
}

// Dial returns a connected Conn that reports to h.
func Dial(url string, h Handler) *Conn {
	return &Conn{URL: url, state: Connected, h: h}
}

// LostConnection marks the conn disconnected and notifies h with mu held.
func (c *Conn) LostConnection() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state = Disconnected
	if c.h != nil {
		c.h.Handle(c, c.state) // CALL UNDER LOCK
	}
}

// Close closes the connection (takes mu).
func (c *Conn) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state = Closed
}
