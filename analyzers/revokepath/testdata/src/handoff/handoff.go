// Package handoff: a //confined:callback that commits inline, and the
// handed-off design where it posts a request to the control goroutine.
package handoff

import (
	"sync"
	"time"
)

type request struct{ done chan struct{} }

type Consumer struct {
	mu       sync.Mutex
	mailbox  chan int64
	requests chan request
	offset   int64 //confined:control
}

//confined:entry
func (c *Consumer) run(tick <-chan struct{}) {
	for {
		select {
		case <-tick:
			c.flushLater()
		case req := <-c.requests:
			c.mu.Lock()
			c.drain()
			c.commit()
			c.mu.Unlock()
			close(req.done)
		}
	}
}

// Revoked is called by the broker library on its own goroutine.
//
//confined:callback
func (c *Consumer) Revoked() {
	req := request{done: make(chan struct{})}
	select {
	case c.requests <- req:
	case <-time.After(time.Second):
		return
	}
	select {
	case <-req.done:
	case <-time.After(time.Second):
	}
}

// RevokedInline is the same callback committing on the broker's goroutine.
//
//confined:callback
func (c *Consumer) RevokedInline() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.commit() // want `Consumer\.commit publishes control progress but runs inline on the goroutine running callback Consumer\.RevokedInline: Consumer\.RevokedInline -> Consumer\.commit; hand the commit`
}

// RevokedDrainInline drains before committing, from the broker's
// goroutine: still inline (and that drain is a confined violation).
//
//confined:callback
func (c *Consumer) RevokedDrainInline() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drain()
	c.commit() // want `Consumer\.commit publishes control progress but runs inline on the goroutine running callback Consumer\.RevokedDrainInline: Consumer\.RevokedDrainInline -> Consumer\.commit;`
}

// RevokedFlush commits through an exported method, a root of its own.
//
//confined:callback
func (c *Consumer) RevokedFlush() {
	c.Flush() // want `Consumer\.commit publishes control progress but runs inline on the goroutine running callback Consumer\.RevokedFlush: Consumer\.RevokedFlush -> Consumer\.Flush -> Consumer\.commit;`
}

// Flush locks, drains and commits; correct on control's goroutine.
func (c *Consumer) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drain()
	c.commit()
}

// flushLater commits from a fresh goroutine.
func (c *Consumer) flushLater() {
	go func() {
		c.mu.Lock()
		c.drain()
		c.commit() // want `runs inline on the goroutine started by the go statement: Consumer\.flushLater\.func1 -> Consumer\.commit;`
		c.mu.Unlock()
	}()
}

//confined:drain
func (c *Consumer) drain() {
	for {
		select {
		case off := <-c.mailbox:
			c.offset = off
		default:
			return
		}
	}
}

//confined:commit
//confined:requires mu
func (c *Consumer) commit() {}
