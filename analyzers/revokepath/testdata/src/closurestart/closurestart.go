// Package closurestart starts its control loop from closures, the way a
// main function does. Calling an entry runs it as its role, so the commits
// below the call are control's whichever goroutine runs the closure: none
// of the Start functions is an inline commit. A closure that commits
// itself still is.
package closurestart

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"
)

type Consumer struct {
	mu      sync.Mutex
	mailbox chan int64
	offset  int64 //confined:control
}

// Run is the control loop.
//
//confined:entry
func (c *Consumer) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		c.mu.Lock()
		c.drain()
		c.commit()
		c.mu.Unlock()
	}
	return ctx.Err()
}

func StartGo(ctx context.Context, c *Consumer) <-chan error {
	errc := make(chan error, 1)
	go func() { errc <- c.Run(ctx) }()
	return errc
}

func StartWaitGroup(ctx context.Context, c *Consumer, wg *sync.WaitGroup) {
	wg.Go(func() { _ = c.Run(ctx) })
}

func StartErrgroup(ctx context.Context, c *Consumer) error {
	var g errgroup.Group
	g.Go(func() error { return c.Run(ctx) })
	return g.Wait()
}

// startLater goes through an unexported helper that calls the entry.
func startLater(ctx context.Context, c *Consumer) {
	go func() { c.runLogged(ctx) }()
}

func (c *Consumer) runLogged(ctx context.Context) {
	if err := c.Run(ctx); err != nil {
		println(err.Error())
	}
}

// FlushOnTheSide commits from a goroutine of its own: no entry in between.
func FlushOnTheSide(c *Consumer) {
	go func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.drain()
		c.commit() // want `Consumer\.commit publishes control progress but runs inline on the goroutine started by the go statement: FlushOnTheSide\.func1 -> Consumer\.commit;`
	}()
}

//confined:drain
func (c *Consumer) drain() {
	for {
		select {
		case off := <-c.mailbox:
			c.offset = off
		default:
			return
		}
	}
}

//confined:commit
//confined:requires mu
func (c *Consumer) commit() {}
