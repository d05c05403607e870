// Package kgohandoff is kgorevoke fixed: the revoke callback hands the
// commit to the control goroutine, which locks, drains and commits, and
// waits for the answer with a bound.
package kgohandoff

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

type commitRequest struct {
	done chan error
}

type Consumer struct {
	cl       *kgo.Client
	mu       sync.Mutex
	mailbox  chan *kgo.Record
	records  chan kgo.Fetches
	requests chan commitRequest
	done     []*kgo.Record //confined:control
}

func NewConsumer(ctx context.Context) (*Consumer, error) {
	c := &Consumer{
		mailbox:  make(chan *kgo.Record, 64),
		records:  make(chan kgo.Fetches),
		requests: make(chan commitRequest),
	}
	cl, err := kgo.NewClient(kgo.OnPartitionsRevoked(c.onRevoked))
	if err != nil {
		return nil, err
	}
	c.cl = cl
	go c.poll(ctx)
	go c.run(ctx)
	return c, nil
}

// onRevoked asks the control goroutine to commit and waits, bounded.
func (c *Consumer) onRevoked(ctx context.Context, _ *kgo.Client, _ map[string][]int32) {
	req := commitRequest{done: make(chan error, 1)}
	select {
	case c.requests <- req:
	case <-time.After(5 * time.Second):
		return
	}
	select {
	case <-req.done:
	case <-time.After(5 * time.Second):
	}
}

func (c *Consumer) poll(ctx context.Context) {
	for ctx.Err() == nil {
		c.records <- c.cl.PollFetches(ctx)
	}
}

//confined:entry
func (c *Consumer) run(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case fs := <-c.records:
			fs.EachRecord(func(r *kgo.Record) {
				go func() { c.mailbox <- r }()
			})
		case req := <-c.requests:
			req.done <- c.lockDrainCommit(ctx)
		case <-tick.C:
			if err := c.lockDrainCommit(ctx); err != nil {
				return
			}
		}
	}
}

func (c *Consumer) lockDrainCommit(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drain()
	return c.commit(ctx)
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
func (c *Consumer) commit(ctx context.Context) error {
	if len(c.done) == 0 {
		return errors.New("nothing to commit")
	}
	err := c.cl.CommitRecords(ctx, c.done...)
	c.done = c.done[:0]
	return err
}
