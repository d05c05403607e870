package right

import (
	"context"

	"github.com/confinelint/confinelint/confine"
	"github.com/twmb/franz-go/pkg/kgo"
)

type Consumer struct {
	owner    confine.Owner //confined:control
	client   *kgo.Client
	mailbox  chan *kgo.Record
	inflight int           //confined:control
	done     []*kgo.Record //confined:control
}

func Start(cl *kgo.Client) *Consumer {
	c := &Consumer{client: cl, mailbox: make(chan *kgo.Record, 64)}
	go c.run()
	return c
}

//confined:entry
func (c *Consumer) run() {
	c.owner.Bind()
	for r := range c.mailbox {
		c.apply(r)
		c.drain()
		c.commit()
	}
}

func (c *Consumer) apply(r *kgo.Record) {
	c.inflight--
	c.done = append(c.done, r)
}

//confined:drain
func (c *Consumer) drain() {
	for {
		select {
		case r := <-c.mailbox:
			c.apply(r)
		default:
			return
		}
	}
}

// example:start

//confined:commit
func (c *Consumer) commit() {
	c.client.CommitRecords(context.Background(), c.done...)
	c.done = c.done[:0]
}

// example:end
