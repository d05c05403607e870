// Package a declares a consumer whose control state package b touches.
package a

import "github.com/confinelint/confinelint/confine"

type Consumer struct {
	owner    confine.Owner
	inflight int //confined:control
	in       chan int
	Lag      int //confined:control
}

//confined:entry
func (c *Consumer) Run() {
	c.owner.Bind()
	for n := range c.in {
		c.inflight += n
	}
}

// Reset must run on the control goroutine.
//
//confined:control
func (c *Consumer) Reset() {
	c.owner.Assert()
	c.inflight = 0
}

// Flush asserts its owner, which declares it control.
func (c *Consumer) Flush() {
	c.owner.Assert()
	c.inflight = 0
}

// Drop declares no role: its callers are unknown.
func (c *Consumer) Drop() { // want `Consumer.Drop touches control state \(c.inflight written: Consumer.Drop -> Consumer.helper -> c.inflight\) but declares no role`
	c.helper()
}

func (c *Consumer) helper() { c.inflight-- }

// Post hands n to the control goroutine.
func (c *Consumer) Post(n int) { c.in <- n }
