// Project: Traefik, safe.Pool (safe/routine.go).
// Bug: approximate (Traefik 1.x): Pool.Stop() held p.lock while cancelling the pool context and
// then blocking in p.waitGroup.Wait(); a pooled routine reacting to the cancellation (a provider
// watch loop scheduling its cleanup through pool.GoCtx) needed p.lock first, so it never returned
// and Stop waited forever for it.
// Fix: release p.lock before waiting on the WaitGroup (later versions dropped the lock entirely).
package traefikpool

import (
	"context"
	"log"
	"runtime/debug"
	"sync"
	"testing"
	"time"
)

type routineCtx func(ctx context.Context)

// Pool is a pool of go routines.
type Pool struct {
	routinesCtx []routineCtx
	waitGroup   sync.WaitGroup
	lock        sync.Mutex
	baseCtx     context.Context
	baseCancel  context.CancelFunc
	ctx         context.Context
	cancel      context.CancelFunc
}

func NewPool(parentCtx context.Context) *Pool {
	baseCtx, baseCancel := context.WithCancel(parentCtx)
	ctx, cancel := context.WithCancel(baseCtx)
	return &Pool{baseCtx: baseCtx, baseCancel: baseCancel, ctx: ctx, cancel: cancel}
}

// Ctx returns main context.
func (p *Pool) Ctx() context.Context { return p.baseCtx }

// GoCtx starts a recoverable goroutine with a context.
func (p *Pool) GoCtx(goroutine routineCtx) {
	p.lock.Lock()
	p.routinesCtx = append(p.routinesCtx, goroutine)
	p.waitGroup.Add(1)
	ctx := p.ctx
	Go(func() {
		defer p.waitGroup.Done()
		goroutine(ctx)
	})
	p.lock.Unlock()
}

// Stop stops all started routines, waiting for their termination.
func (p *Pool) Stop() {
	p.lock.Lock()
	defer p.lock.Unlock()
	p.cancel()
	p.waitGroup.Wait()
	p.routinesCtx = nil
}

// Go starts a recoverable goroutine.
func Go(goroutine func()) {
	go func() {
		defer func() {
			if err := recover(); err != nil {
				log.Printf("Error in Go routine: %s\n%s", err, debug.Stack())
			}
		}()
		goroutine()
	}()
}

type Message struct{ ProviderName string }

// FileProvider watches a directory and pushes configuration messages.
type FileProvider struct {
	mu      sync.Mutex
	pending []Message
	flushed int
}

func (f *FileProvider) Provide(pool *Pool) {
	pool.GoCtx(func(ctx context.Context) {
		ticker := time.NewTicker(5 * time.Millisecond)
		defer ticker.Stop()
		for {
			select {
			case <-ticker.C:
				f.mu.Lock()
				f.pending = append(f.pending, Message{ProviderName: "file"})
				f.mu.Unlock()
			case <-ctx.Done():
				// Flush whatever was collected before going away.
				pool.GoCtx(f.flush)
				return
			}
		}
	})
}

func (f *FileProvider) flush(ctx context.Context) {
	f.mu.Lock()
	f.flushed += len(f.pending)
	f.pending = nil
	f.mu.Unlock()
}

func TestPoolStopDeadlock(t *testing.T) {
	pool := NewPool(context.Background())
	(&FileProvider{}).Provide(pool)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // server shutdown / configuration reload
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		pool.Stop()
	}()
	wg.Wait()
}
