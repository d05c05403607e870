package right

import "github.com/confinelint/confinelint/confine"

type Consumer struct {
	owner   confine.Owner //confined:control poll
	mailbox chan func()
	// example:start

	inflight int //confined:control poll
	// example:end
}

//confined:entry poll
func (c *Consumer) run() {
	c.owner.Bind()
	for f := range c.mailbox {
		f()
	}
}

// example:start

// Reset zeroes the in-flight count.
//
//confined:control poll
func (c *Consumer) Reset() {
	c.owner.Assert()
	c.inflight = 0
}

// example:end
