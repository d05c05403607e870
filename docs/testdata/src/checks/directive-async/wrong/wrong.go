package wrong

// example:start

//confined:async example.com/pool.(*Pool).Sumbit arg0 // want `//confined:async: package example\.com/pool has no method Pool\.Sumbit; did you mean example\.com/pool\.\(\*Pool\)\.Submit\? \[directive-async\]`

// example:end

import (
	"example.com/pool"

	"github.com/confinelint/confinelint/confine"
)

type Consumer struct {
	owner    confine.Owner //confined:control
	inflight int           //confined:control
	mailbox  chan int
	pool     *pool.Pool
}

//confined:entry
func (c *Consumer) run() {
	c.owner.Bind()
	c.pool.Submit(func() { c.mailbox <- 1 })
	for n := range c.mailbox {
		c.inflight -= n
	}
}
