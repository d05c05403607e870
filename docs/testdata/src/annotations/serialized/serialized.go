// Package serialized is the franz-go consumer of docs/annotations.md:
// with kgo.BlockRebalanceOnPoll the revoke callback runs on the client's
// goroutine but only while the poll loop is parked, so it may drain and
// commit as the loop does.
package serialized

import (
	"context"
	"sync"

	"github.com/confinelint/confinelint/confine"
	"github.com/twmb/franz-go/pkg/kgo"
)

type Consumer struct {
	owner   confine.Owner //confined:control
	cl      *kgo.Client
	mu      sync.Mutex
	mailbox chan *kgo.Record
	done    []*kgo.Record //confined:control
}

// example:start

func New() (*Consumer, error) {
	c := &Consumer{mailbox: make(chan *kgo.Record, 256)}
	cl, err := kgo.NewClient(
		kgo.BlockRebalanceOnPoll(), // callbacks wait for AllowRebalance
		kgo.OnPartitionsRevoked(c.onRevoked),
	)
	c.cl = cl
	return c, err
}

//confined:entry
func (c *Consumer) Run(ctx context.Context) {
	c.owner.Bind()
	defer c.owner.Release() // also ends a loan
	c.owner.Lend()          // callbacks may run until PollFetches returns
	for ctx.Err() == nil {
		fetches := c.cl.PollFetches(ctx) // rebalances are blocked from here
		c.owner.Reclaim()
		c.process(fetches)
		c.mu.Lock()
		c.drain()
		c.commit(ctx)
		c.mu.Unlock()
		c.owner.Lend()
		c.cl.AllowRebalance() // callbacks may run until the next PollFetches returns
	}
}

// onRevoked runs on the client's goroutine, never concurrently with Run.
//
//confined:serialized control
func (c *Consumer) onRevoked(ctx context.Context, _ *kgo.Client, _ map[string][]int32) {
	c.owner.Assert() // passes while Run has lent the owner
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drain()
	c.commit(ctx)
}

// example:end

func (c *Consumer) process(fetches kgo.Fetches) {
	for _, r := range fetches {
		go func() { c.mailbox <- r }() // a worker reports through the mailbox
	}
}

//confined:drain
func (c *Consumer) drain() {
	for {
		select {
		case r := <-c.mailbox:
			c.done = append(c.done, r)
		default:
			return
		}
	}
}

//confined:commit
//confined:requires mu
func (c *Consumer) commit(ctx context.Context) {
	_ = c.cl.CommitRecords(ctx, c.done...)
	c.done = c.done[:0]
}
