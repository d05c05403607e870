// Package group is a trimmed golang.org/x/sync/errgroup with SetLimit.
package group

import (
	"context"
	"sync"
)

// Group runs tasks and records the first error.
type Group struct {
	cancel func(error)
	wg     sync.WaitGroup
	sem    chan struct{}

	errMu sync.Mutex
	err   error
}

func WithContext(ctx context.Context) (*Group, context.Context) {
	ctx, cancel := context.WithCancelCause(ctx)
	return &Group{cancel: cancel}, ctx
}

func (g *Group) SetLimit(n int) { g.sem = make(chan struct{}, n) }

func (g *Group) Go(f func() error) {
	if g.sem != nil {
		g.sem <- struct{}{}
	}
	g.wg.Add(1)
	go func() {
		defer func() {
			if g.sem != nil {
				<-g.sem
			}
			g.wg.Done()
		}()
		if err := f(); err != nil {
			g.errMu.Lock()
			first := g.err == nil
			if first {
				g.err = err
			}
			g.errMu.Unlock()
			if first && g.cancel != nil {
				g.cancel(err)
			}
		}
	}()
}

// Wait blocks until all tasks finish; no lock is held while waiting.
func (g *Group) Wait() error {
	g.wg.Wait()
	if g.cancel != nil {
		g.cancel(g.err)
	}
	g.errMu.Lock()
	defer g.errMu.Unlock()
	return g.err
}
