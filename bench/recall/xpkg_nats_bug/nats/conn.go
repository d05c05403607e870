// Package nats is a toy client connection modeled on nats-io/nats.go.
package nats

import (
	"errors"
	"sync"
)

var errClosed = errors.New("nats: connection closed")

// Handler receives connection lifecycle callbacks (DisconnectErrHandler).
type Handler interface {
	Disconnected(url string)
}

// Conn is a client connection.
type Conn struct {
	mu      sync.Mutex
	url     string
	pending [][]byte
	closed  bool
	handler Handler
}

// Connect returns a connection that reports to h.
func Connect(url string, h Handler) *Conn { return &Conn{url: url, handler: h} }

// Publish buffers data for subj.
func (c *Conn) Publish(subj string, data []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errClosed
	}
	c.pending = append(c.pending, append([]byte(subj+" "), data...))
	return nil
}

// Close marks the connection closed and fires the disconnect callback inline,
// while still holding c.mu.
func (c *Conn) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.pending = nil
	c.handler.Disconnected(c.url)
}
