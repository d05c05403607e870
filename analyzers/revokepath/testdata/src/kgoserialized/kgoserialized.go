// Package kgoserialized: with kgo.BlockRebalanceOnPoll the revoke callback
// runs only while the poll loop is parked, so it may drain and commit as
// control does: declared //confined:serialized control, it is checked as
// control's code. Committing there without a drain is still a finding.
package kgoserialized

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

type Consumer struct {
	cl      *kgo.Client
	mu      sync.Mutex
	mailbox chan *kgo.Record
	done    []*kgo.Record //confined:control
}

func New() (*Consumer, error) {
	c := &Consumer{}
	cl, err := kgo.NewClient(
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsRevoked(c.onRevoked),
		kgo.OnPartitionsRevoked(c.onRevokedHasty),
	)
	c.cl = cl
	return c, err
}

//confined:entry
func (c *Consumer) Run(ctx context.Context) {
	for ctx.Err() == nil {
		c.cl.PollFetches(ctx)
		c.mu.Lock()
		c.drain()
		c.commit(ctx)
		c.mu.Unlock()
		c.cl.AllowRebalance()
	}
}

// onRevoked drains and commits on the client's goroutine, serialized with
// control: not an inline commit.
//
//confined:serialized control
func (c *Consumer) onRevoked(ctx context.Context, _ *kgo.Client, _ map[string][]int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drain()
	c.commit(ctx)
}

// onRevokedHasty forgets the drain: checked as control's code, that is the
// ordinary missing-drain finding.
//
//confined:serialized control
func (c *Consumer) onRevokedHasty(ctx context.Context, _ *kgo.Client, _ map[string][]int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.commit(ctx) // want `commit Consumer\.commit \(publishes control progress\) can run without a drain of control's mailbox after Consumer\.mu is taken: Consumer\.onRevokedHasty -> Consumer\.commit \[commit-without-drain\]`
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
