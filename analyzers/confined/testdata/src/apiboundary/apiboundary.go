// Package apiboundary: exported functions cannot inherit a role from
// callers the analysis cannot see.
package apiboundary

import "github.com/confinelint/confinelint/confine"

type Consumer struct {
	owner    confine.Owner
	inflight int //confined:control
	hook     func()
}

//confined:entry
func (c *Consumer) run() {
	c.owner.Bind()
	c.reset()
	c.hook = c.onHook
}

// Reset zeroes the counter.
func (c *Consumer) Reset() { // want `Consumer.Reset touches control state \(c.inflight written: Consumer.Reset -> Consumer.reset -> c.inflight\) but declares no role, and it is exported so its callers are unknown: declare it //confined:control \[`
	c.reset()
}

func (c *Consumer) reset() { c.inflight = 0 }

// Inflight is declared, and asserts.
//
//confined:control
func (c *Consumer) Inflight() int {
	c.owner.Assert()
	return c.inflight
}

func Peek(c *Consumer) int { return c.inflight } // want `Peek touches control state`

func (c *Consumer) onHook() { c.inflight++ } // want `Consumer.onHook touches control state \(c.inflight written: Consumer.onHook -> c.inflight\) but declares no role, and its address escapes`
