package right

import (
	"sync"

	"github.com/confinelint/confinelint/confine"
)

type Consumer struct {
	owner   confine.Owner //confined:control poll
	mu      sync.Mutex
	mailbox chan int64
	fetched chan int64
	offset  int64 //confined:control poll
	next    int64 //confined:control poll
}

func (c *Consumer) fetch() { c.next = <-c.fetched }

// drainMailbox applies the offsets the workers finished.
//
//confined:drain poll
func (c *Consumer) drainMailbox() {
	for {
		select {
		case off := <-c.mailbox:
			c.offset = off
		default:
			return
		}
	}
}

//confined:commit poll
func (c *Consumer) commitOffsets() {}

// example:start

//confined:entry poll
func (c *Consumer) run() {
	c.owner.Bind()
	for {
		c.fetch()
		c.drainMailbox() // declared //confined:drain poll
		c.commitOffsets()
	}
}

// example:end

var _ sync.Mutex
