// Package app starts closurestart's control loop from another package, as
// a main function does: its entry's commits are control's, not app's.
package app

import (
	"context"

	"closurestart"

	"golang.org/x/sync/errgroup"
)

func Serve(ctx context.Context, c *closurestart.Consumer) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return c.Run(ctx) })
	return g.Wait()
}
