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

//confined:callback
func (c *Consumer) onRevoked() {
	c.inflight = 0 // want `c\.inflight is confined to poll but written on the goroutine running callback Consumer\.onRevoked: Consumer\.onRevoked -> c\.inflight \[foreign-access\]`
}

// example:end
