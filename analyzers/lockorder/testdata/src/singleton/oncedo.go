package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// A provider shuts its processors down once each, through sync.Once.Do,
// under its lock. The one processor flushes what it queued (nothing
// queued: nothing to do) through a client whose interceptor, a closure a
// constructor returned, asks the provider for a tracer, which locks it.
// The processor's guard is its own choice to flush; its test of the
// export's error comes after the export and decides nothing.

type tracerProvider struct {
	mu         sync.Mutex
	named      map[string]int
	processors []*processorState
	down       atomic.Bool
}

type processorState struct {
	sp   spanProcessor
	once *sync.Once
}

type spanProcessor interface {
	Shutdown(ctx context.Context) error
}

func (p *tracerProvider) Tracer(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.named[name]++
	return p.named[name]
}

func (p *tracerProvider) Shutdown(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var first error
	for _, ps := range p.processors {
		var err error
		ps.once.Do(func() { // want `tracerProvider.mu locked again by sync.Once.Do -> tracerProvider.Shutdown.func1 -> flusher.Shutdown -> rpcConn.Invoke -> interceptorFor.func1 -> tracerProvider.Tracer \(at oncedo.go:\d+, on the paths that call tracerProvider.Tracer\), the same lock: the program makes one tracerProvider`
			err = ps.sp.Shutdown(ctx)
		})
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

type interceptor func(ctx context.Context, method string) error

type rpcConn struct{ intercept interceptor }

func (c *rpcConn) Invoke(ctx context.Context, method string) error {
	if c.intercept != nil {
		return c.intercept(ctx, method)
	}
	return nil
}

type flusher struct {
	mu    sync.Mutex
	queue []string
	conn  *rpcConn
}

func (f *flusher) Shutdown(ctx context.Context) error {
	f.mu.Lock()
	batch := f.queue
	f.queue = nil
	f.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	if err := f.conn.Invoke(ctx, "export"); err != nil {
		return fmt.Errorf("final export: %w", err)
	}
	return nil
}

func interceptorFor(p *tracerProvider) interceptor {
	return func(ctx context.Context, method string) error {
		p.Tracer(method)
		return nil
	}
}

// Correct: a provider whose Tracer, once shutdown began, answers without
// its lock; Shutdown sets that flag before it runs the processors.
type quietProvider struct {
	mu         sync.Mutex
	named      map[string]int
	processors []*quietState
	down       atomic.Bool
}

type quietState struct {
	sp   quietProcessor
	once *sync.Once
}

type quietProcessor interface {
	Shutdown(ctx context.Context) error
}

func (p *quietProvider) Tracer(name string) int {
	if p.down.Load() {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.named[name]++
	return p.named[name]
}

func (p *quietProvider) Shutdown(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down.Store(true)
	for _, ps := range p.processors {
		ps.once.Do(func() {
			_ = ps.sp.Shutdown(ctx)
		})
	}
}

type quietConn struct{ intercept interceptor }

func (c *quietConn) Invoke(ctx context.Context, method string) error {
	if c.intercept != nil {
		return c.intercept(ctx, method)
	}
	return nil
}

type quietFlusher struct {
	queue []string
	conn  *quietConn
}

func (f *quietFlusher) Shutdown(ctx context.Context) error {
	if len(f.queue) == 0 {
		return nil
	}
	return f.conn.Invoke(ctx, "export")
}

func quietInterceptorFor(p *quietProvider) interceptor {
	return func(ctx context.Context, method string) error {
		p.Tracer(method)
		return nil
	}
}

func runProviders() {
	conn := &rpcConn{}
	p := &tracerProvider{named: map[string]int{}}
	p.processors = []*processorState{{sp: &flusher{conn: conn, queue: []string{"span"}}, once: &sync.Once{}}}
	conn.intercept = interceptorFor(p)
	_ = p.Shutdown(context.Background())

	quiet := &quietConn{}
	q := &quietProvider{named: map[string]int{}}
	q.processors = []*quietState{{sp: &quietFlusher{conn: quiet, queue: []string{"span"}}, once: &sync.Once{}}}
	quiet.intercept = quietInterceptorFor(q)
	q.Shutdown(context.Background())
}
