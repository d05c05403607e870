package wrong

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
)

type Consumer struct {
	client   *kgo.Client
	mailbox  chan *kgo.Record
	inflight int           // want `Consumer\.inflight: add //confined:control .* \[suggest-control\]`
	done     []*kgo.Record // want `Consumer\.done: add //confined:control .* \[suggest-control\]`
}

func Start(cl *kgo.Client) *Consumer {
	c := &Consumer{client: cl, mailbox: make(chan *kgo.Record, 64)}
	go c.run()
	return c
}

func (c *Consumer) run() { // want `Consumer\.run: add //confined:entry .* \[suggest-entry\]`
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

// Inflight and Done are read from other goroutines: the deviants.
func (c *Consumer) Inflight() int { return c.inflight }

func (c *Consumer) Done() int { return len(c.done) }

// example:start

func (c *Consumer) drain() { // want `Consumer\.drain: add //confined:drain \(rank \d of \d\): it loops over a non-blocking receive from c\.mailbox on Consumer\.run's goroutine \[suggest-drain\]`
	for {
		select {
		case r := <-c.mailbox:
			c.apply(r)
		default:
			return
		}
	}
}

// example:end

func (c *Consumer) commit() { // want `Consumer\.commit: add //confined:commit \(rank \d of \d\): it calls CommitRecords and reads Consumer\.done, owned by Consumer\.run's goroutine \[suggest-commit\]`
	c.client.CommitRecords(context.Background(), c.done...)
	c.done = c.done[:0]
}
