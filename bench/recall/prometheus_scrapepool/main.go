// Project: prometheus/prometheus (scrape pool), as remembered.
// Bug: scrapePool.Sync holds sp.mtx for the whole target sync; after
// starting/stopping loops, sync() refreshed the target metrics through
// updateTargetMetrics(), which used the public ActiveTargets() accessor.
// ActiveTargets() takes sp.mtx again -> non-reentrant double Lock, the
// discovery manager's sync goroutine hangs and all scrape reloads stop.
package main

import (
	"context"
	"hash/fnv"
	"sync"
	"time"
)

type Target struct {
	URL     string
	dropped bool
}

func (t *Target) hash() uint64 {
	h := fnv.New64a()
	h.Write([]byte(t.URL))
	return h.Sum64()
}

type loop interface {
	run(ctx context.Context)
	stop()
}

type scrapeLoop struct {
	target *Target
	cancel context.CancelFunc
}

func (l *scrapeLoop) run(ctx context.Context) { <-ctx.Done() }
func (l *scrapeLoop) stop()                   { l.cancel() }

type scrapePool struct {
	mtx           sync.Mutex
	activeTargets map[uint64]*Target
	loops         map[uint64]loop
	newLoop       func(*Target) (loop, context.Context)
	targetsGauge  int
}

// Sync is called by the discovery manager with the latest target groups.
func (sp *scrapePool) Sync(tgs []*Target) {
	sp.mtx.Lock()
	defer sp.mtx.Unlock()
	var all []*Target
	for _, t := range tgs {
		if !t.dropped {
			all = append(all, t)
		}
	}
	sp.sync(all)
}

// sync must be called with sp.mtx held.
func (sp *scrapePool) sync(targets []*Target) {
	uniq := make(map[uint64]struct{}, len(targets))
	for _, t := range targets {
		h := t.hash()
		uniq[h] = struct{}{}
		if _, ok := sp.activeTargets[h]; !ok {
			l, ctx := sp.newLoop(t)
			sp.activeTargets[h] = t
			sp.loops[h] = l
			go l.run(ctx)
		}
	}
	for h, l := range sp.loops {
		if _, ok := uniq[h]; !ok {
			l.stop()
			delete(sp.loops, h)
			delete(sp.activeTargets, h)
		}
	}
	sp.updateTargetMetrics()
}

func (sp *scrapePool) updateTargetMetrics() {
	sp.targetsGauge = len(sp.ActiveTargets())
}

// ActiveTargets is also used by the web API.
func (sp *scrapePool) ActiveTargets() []*Target {
	sp.mtx.Lock()
	defer sp.mtx.Unlock()
	out := make([]*Target, 0, len(sp.activeTargets))
	for _, t := range sp.activeTargets {
		out = append(out, t)
	}
	return out
}

func main() {
	sp := &scrapePool{
		activeTargets: make(map[uint64]*Target),
		loops:         make(map[uint64]loop),
		newLoop: func(t *Target) (loop, context.Context) {
			ctx, cancel := context.WithCancel(context.Background())
			return &scrapeLoop{target: t, cancel: cancel}, ctx
		},
	}
	go sp.Sync([]*Target{{URL: "http://node1:9100/metrics"}, {URL: "http://x", dropped: true}})
	time.Sleep(time.Second)
}
