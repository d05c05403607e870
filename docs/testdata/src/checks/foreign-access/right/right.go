package right

import (
	"time"

	"github.com/confinelint/confinelint/confine"
)

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
	done := make(chan struct{})
	c.mailbox <- func() { c.inflight = 0; close(done) } // runs on poll's goroutine
	select {
	case <-done:
	case <-time.After(5 * time.Second): // never stall the client's goroutine for long
	}
}

// example:end
