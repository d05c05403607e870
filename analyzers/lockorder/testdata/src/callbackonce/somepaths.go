package callbackonce

import (
	"context"
	"sync"
)

// A function sync.Once.Do runs under the lock reaches, on some paths of
// a static helper, a method that locks on every path: the helper's guard
// (nothing queued) is its own choice to call, and when it calls, the
// lock held across Do is taken again.

type Provider struct {
	mu     sync.Mutex
	once   sync.Once
	queue  []string
	export func(context.Context, []string) error
	sent   int
}

func (p *Provider) Shutdown(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.once.Do(func() { // want `Provider.mu locked again by sync.Once.Do -> Provider.Shutdown.func1 -> Provider.flush -> Provider.Stats \(at somepaths.go:\d+, on the paths that call Provider.Stats\)`
		p.flush(ctx)
	})
}

func (p *Provider) flush(ctx context.Context) {
	batch := p.queue
	p.queue = nil
	if len(batch) == 0 {
		return
	}
	p.sent += p.Stats()
}

func (p *Provider) Stats() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent
}

// Correct: the holder clears the flag the helper's guard tests before Do
// runs it, ruling out the branch that calls Stats.
type Gauge struct {
	mu    sync.Mutex
	once  sync.Once
	dirty bool
	v     int
}

func (g *Gauge) Close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.dirty = false
	g.once.Do(func() {
		g.refreshIfDirty()
	})
}

func (g *Gauge) refreshIfDirty() {
	if !g.dirty {
		return
	}
	g.v = g.Value()
}

func (g *Gauge) Value() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.v
}
