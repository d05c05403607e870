package wrong

import (
	"context"

	"github.com/confinelint/confinelint/confine"
	"github.com/twmb/franz-go/pkg/kgo"
)

type Consumer struct {
	owner   confine.Owner //confined:control
	mailbox chan func()
	done    chan int64
	offset  int64 //confined:control
}

//confined:entry
func (c *Consumer) run() {
	c.owner.Bind()
	for f := range c.mailbox {
		f()
	}
}

//confined:drain
func (c *Consumer) drainMailbox() {
	for {
		select {
		case off := <-c.done:
			c.offset = off
		default:
			return
		}
	}
}

//confined:commit
func (c *Consumer) commitOffsets() {}

func (c *Consumer) client() (*kgo.Client, error) {
	return kgo.NewClient(kgo.OnPartitionsRevoked(c.onRevoked))
}

// example:start

func (c *Consumer) onRevoked(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
	c.drainMailbox()  // want `Consumer\.drainMailbox is confined to control but called on the goroutine started by kgo\.OnPartitionsRevoked`
	c.commitOffsets() // want `Consumer\.commitOffsets publishes control progress but runs inline on the goroutine started by kgo\.OnPartitionsRevoked: Consumer\.onRevoked -> Consumer\.commitOffsets; hand the commit to control's goroutine .*\[inline-commit\]`
}

// example:end
