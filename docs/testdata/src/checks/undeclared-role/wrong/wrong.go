package wrong

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
func (c *Consumer) Reset() { // want `Consumer\.Reset touches poll state \(c\.inflight written: Consumer\.Reset -> c\.inflight\) but declares no role, and it is exported so its callers are unknown: declare it //confined:control poll \[undeclared-role\]`
	c.inflight = 0
}

// example:end
