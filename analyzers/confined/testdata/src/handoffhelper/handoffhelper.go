// Package handoffhelper: a function value passed to this package's helper
// runs where the helper runs it. A helper that posts it to the control
// goroutine hands it off (silent); one that calls it runs it on the
// caller's goroutine; one that starts it with go runs it on a goroutine of
// its own.
package handoffhelper

import (
	"context"
	"time"

	"github.com/confinelint/confinelint/confine"
)

type Consumer struct {
	owner    confine.Owner
	inflight int //confined:control
	requests chan func()
}

//confined:entry
func (c *Consumer) run() {
	c.owner.Bind()
	for f := range c.requests {
		f()
	}
}

// ask runs f on the control goroutine and waits, bounded by ctx.
func (c *Consumer) ask(ctx context.Context, f func()) error {
	done := make(chan struct{})
	select {
	case c.requests <- func() { f(); close(done) }:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// post only sends f.
func (c *Consumer) post(f func()) { c.requests <- f }

// now calls f on the caller's goroutine.
func now(f func()) { f() }

// later starts f on a goroutine of its own.
func later(f func()) { go f() }

// through passes f on to ask.
func (c *Consumer) through(ctx context.Context, f func()) { _ = c.ask(ctx, f) }

//confined:callback
func (c *Consumer) onRevoked() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = c.ask(ctx, func() { c.inflight = 0 }) // handed to control: silent
	c.post(func() { c.inflight++ })           // handed to control: silent
	c.through(ctx, func() { c.inflight-- })   // through another helper: silent
	now(func() {
		c.inflight = 1 // want `c\.inflight is confined to control but written on the goroutine running callback Consumer\.onRevoked: Consumer\.onRevoked -> Consumer\.onRevoked\.func4 -> c\.inflight`
	})
}

func (c *Consumer) tick() {
	later(func() {
		c.inflight = 2 // want `c\.inflight is confined to control but written on the goroutine started by later: Consumer\.tick\.func1 -> c\.inflight`
	})
}

func (c *Consumer) start() { go c.tick() }
