// Package closurestart shows the shapes main functions start a control
// loop with: each call of the entry runs it as control, so none of them is
// a finding.
package closurestart

import (
	"context"
	"sync"

	"github.com/confinelint/confinelint/confine"
	"golang.org/x/sync/errgroup"
)

type Consumer struct {
	owner   confine.Owner //confined:control
	offsets []int64       //confined:control
	mailbox chan int64
	mu      sync.Mutex
}

//confined:entry
func (c *Consumer) Run(ctx context.Context) error {
	c.owner.Bind()
	defer c.owner.Release()
	for ctx.Err() == nil {
		c.mu.Lock()
		c.drain()
		c.commit()
		c.mu.Unlock()
	}
	return ctx.Err()
}

//confined:drain
func (c *Consumer) drain() {
	for {
		select {
		case off := <-c.mailbox:
			c.offsets = append(c.offsets, off)
		default:
			return
		}
	}
}

//confined:commit
//confined:requires mu
func (c *Consumer) commit() { c.offsets = c.offsets[:0] }

// example:start

func serve(ctx context.Context, c *Consumer, wg *sync.WaitGroup) error {
	go c.Run(ctx)                       // a go statement on the entry
	go func() { _ = c.Run(ctx) }()      // a closure that calls it
	wg.Go(func() { _ = c.Run(ctx) })    // sync.WaitGroup.Go
	g, ctx := errgroup.WithContext(ctx) // errgroup, the usual shape in main
	g.Go(func() error { return c.Run(ctx) })
	return g.Wait()
}

// example:end
