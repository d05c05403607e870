package consumer

import (
	"context"
	"errors"
	"sync"
	"testing"

	"example.com/shop/pool"

	"golang.org/x/sync/errgroup"
)

func newTest(t *testing.T) *Consumer {
	t.Helper()
	p := pool.New(2)
	t.Cleanup(p.Close)
	c, err := New([]string{"localhost:9092"}, "test", 2, p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRunWithGoStatement(t *testing.T) {
	c := newTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.Run(ctx) }()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}

func TestRunWithWaitGroup(t *testing.T) {
	c := newTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = c.Run(ctx) })
	cancel()
	wg.Wait()
	if s := c.Snapshot(); s.Commits != 0 {
		t.Errorf("committed %d times with nothing fetched", s.Commits)
	}
}

func TestRunWithErrgroup(t *testing.T) {
	c := newTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return c.Run(ctx) })
	cancel()
	if err := g.Wait(); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}
