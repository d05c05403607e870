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

//confined:any
func (c *Consumer) Stats() int {
	reply := make(chan int, 1)
	c.mailbox <- func() { reply <- c.inflight }
	return <-reply
}

// example:end
