package main

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

// workerGroup is a minimal goroutine group.
type workerGroup struct {
	wg sync.WaitGroup
}

func (g *workerGroup) Go(f func()) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		f()
	}()
}

func (g *workerGroup) Wait() { g.wg.Wait() }

// Prober health-checks a set of backends. reloadMu serializes reloads and
// is held across Wait; the probe functions only take resultsMu.
type Prober struct {
	reloadMu  sync.Mutex
	backends  []string
	resultsMu sync.Mutex
	healthy   map[string]bool
	latency   map[string]time.Duration
}

func NewProber() *Prober {
	return &Prober{healthy: map[string]bool{}, latency: map[string]time.Duration{}}
}

func (p *Prober) probe(addr string) {
	start := time.Now()
	time.Sleep(time.Duration(len(addr)%3) * time.Millisecond)
	ok := len(addr)%2 == 0
	p.resultsMu.Lock()
	p.healthy[addr] = ok
	p.latency[addr] = time.Since(start)
	p.resultsMu.Unlock()
}

// Reload replaces the backend list and probes every backend before
// returning. The group is waited on while reloadMu is held, which is fine
// because probe never touches reloadMu.
func (p *Prober) Reload(addrs []string) {
	p.reloadMu.Lock()
	defer p.reloadMu.Unlock()
	p.backends = append([]string(nil), addrs...)

	var g workerGroup
	for _, a := range p.backends {
		a := a
		g.Go(func() { p.probe(a) })
	}
	g.Wait()
}

func (p *Prober) Healthy() []string {
	p.resultsMu.Lock()
	defer p.resultsMu.Unlock()
	var out []string
	for a, ok := range p.healthy {
		if ok {
			out = append(out, a)
		}
	}
	sort.Strings(out)
	return out
}

func main() {
	p := NewProber()
	var callers workerGroup
	callers.Go(func() { p.Reload([]string{"10.0.0.1:80", "10.0.0.22:80", "10.0.0.3:8080"}) })
	callers.Go(func() { p.Reload([]string{"db-1:5432", "db-22:5432"}) })
	callers.Go(func() {
		for i := 0; i < 5; i++ {
			_ = p.Healthy()
			time.Sleep(time.Millisecond)
		}
	})
	callers.Wait()
	fmt.Println("healthy:", p.Healthy())
}
