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

//confined:any
func (c *Consumer) Stats() int {
	return c.inflight // want `Consumer\.Stats is //confined:any but c\.inflight, confined to poll, is read in it: Consumer\.Stats -> c\.inflight \[any-touches-state\]`
}

// example:end
