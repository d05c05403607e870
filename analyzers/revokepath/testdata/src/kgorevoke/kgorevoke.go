// Package kgorevoke is a franz-go consumer as users write it: the revoke
// callback commits what has been processed before giving the partitions
// up. It runs on the client's goroutine, not the control goroutine, so it
// publishes progress whose completions are still in the mailbox.
package kgorevoke

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

type Consumer struct {
	cl      *kgo.Client
	mu      sync.Mutex
	mailbox chan *kgo.Record
	records chan kgo.Fetches
	done    []*kgo.Record //confined:control
}

func NewConsumer(ctx context.Context) (*Consumer, error) {
	c := &Consumer{mailbox: make(chan *kgo.Record, 64), records: make(chan kgo.Fetches)}
	cl, err := kgo.NewClient(
		kgo.OnPartitionsRevoked(func(ctx context.Context, _ *kgo.Client, _ map[string][]int32) {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.commit(ctx) // want `Consumer\.commit publishes control progress but runs inline on the goroutine started by kgo\.OnPartitionsRevoked: NewConsumer\.func1 -> Consumer\.commit; hand the commit to control's goroutine \(post a request to its mailbox and wait with a bound\) instead of committing here \[inline-commit\]`
		}),
		kgo.OnPartitionsRevoked(c.onRevoked),
	)
	if err != nil {
		return nil, err
	}
	c.cl = cl
	go c.poll(ctx)
	go c.run(ctx)
	return c, nil
}

// onRevoked is the same callback as a method, through a helper.
func (c *Consumer) onRevoked(ctx context.Context, _ *kgo.Client, _ map[string][]int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.commitLocked(ctx) // want `runs inline on the goroutine started by kgo\.OnPartitionsRevoked: Consumer\.onRevoked -> Consumer\.commitLocked -> Consumer\.commit;`
}

// commitLocked is the shared helper: the finding is at the callback's call
// of it, where the handoff to control belongs.
func (c *Consumer) commitLocked(ctx context.Context) {
	c.commit(ctx)
}

// poll feeds fetched records to the control goroutine.
func (c *Consumer) poll(ctx context.Context) {
	for ctx.Err() == nil {
		c.records <- c.cl.PollFetches(ctx)
	}
}

// run is the control goroutine.
//
//confined:entry
func (c *Consumer) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case fs := <-c.records:
			fs.EachRecord(func(r *kgo.Record) {
				go func() { c.mailbox <- r }()
			})
		}
		c.mu.Lock()
		c.drain()
		c.commitLocked(ctx) // correct here: commitLocked also runs on control's goroutine
		c.mu.Unlock()
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
