// Project: prometheus (scrape/scrape.go, scrapePool).
//
// Bug (approximate): scrapePool.Sync takes sp.mtx and, in sp.sync, creates a
// scrape loop for every new target through the sp.newLoop func field. The
// closure installed by newScrapePool read the pool's current config through
// sp.currentConfig(), which takes sp.mtx again (it is also used by the
// API/reload paths that do not hold the lock). sync.Mutex is not reentrant, so
// the first service-discovery update that adds a target hangs the scrape
// manager (and with it every later reload and /api/v1/targets call).
// Fix: the closure reads sp.config directly; sp.newLoop is documented as being
// called with sp.mtx held.
package promscrape

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"
)

type ScrapeConfig struct {
	JobName        string
	ScrapeInterval time.Duration
	ScrapeTimeout  time.Duration
	HonorLabels    bool
	SampleLimit    int
}

type Target struct {
	labels map[string]string
}

func (t *Target) hash() string {
	keys := make([]string, 0, len(t.labels))
	for k := range t.labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := ""
	for _, k := range keys {
		s += k + "=" + t.labels[k] + ","
	}
	return s
}

type targetgroupGroup struct {
	Targets []map[string]string
	Source  string
}

type loop interface {
	run(errc chan<- error)
	stop()
}

type scrapeLoopOptions struct {
	target      *Target
	honorLabels bool
	sampleLimit int
	interval    time.Duration
	timeout     time.Duration
}

type scrapeLoop struct {
	target      *Target
	honorLabels bool
	sampleLimit int
	interval    time.Duration
	timeout     time.Duration
	ctx         context.Context
	cancel      context.CancelFunc
	stopped     chan struct{}
}

func newScrapeLoop(ctx context.Context, opts scrapeLoopOptions) *scrapeLoop {
	ctx, cancel := context.WithCancel(ctx)
	return &scrapeLoop{target: opts.target, honorLabels: opts.honorLabels, sampleLimit: opts.sampleLimit,
		interval: opts.interval, timeout: opts.timeout, ctx: ctx, cancel: cancel, stopped: make(chan struct{})}
}

func (sl *scrapeLoop) run(chan<- error) {
	defer close(sl.stopped)
	ticker := time.NewTicker(sl.interval)
	defer ticker.Stop()
	for {
		select {
		case <-sl.ctx.Done():
			return
		case <-ticker.C: // scrape + append
		}
	}
}

func (sl *scrapeLoop) stop() {
	sl.cancel()
	<-sl.stopped
}

type scrapePool struct {
	ctx    context.Context
	cancel context.CancelFunc

	// mtx must not be taken after targetMtx.
	mtx    sync.Mutex
	config *ScrapeConfig

	activeTargets map[string]*Target
	loops         map[string]loop

	// newLoop injection for testing purposes. Called with sp.mtx held.
	newLoop func(scrapeLoopOptions) loop
}

func newScrapePool(cfg *ScrapeConfig) *scrapePool {
	ctx, cancel := context.WithCancel(context.Background())
	sp := &scrapePool{
		ctx:           ctx,
		cancel:        cancel,
		config:        cfg,
		activeTargets: map[string]*Target{},
		loops:         map[string]loop{},
	}
	sp.newLoop = func(opts scrapeLoopOptions) loop {
		cfg := sp.currentConfig()
		opts.honorLabels = cfg.HonorLabels
		opts.sampleLimit = cfg.SampleLimit
		return newScrapeLoop(ctx, opts)
	}
	return sp
}

// currentConfig is used by the web API and the reload path.
func (sp *scrapePool) currentConfig() *ScrapeConfig {
	sp.mtx.Lock() // DEADLOCK HERE (sp.mtx already held by Sync)
	defer sp.mtx.Unlock()
	return sp.config
}

// Sync converts target groups into actual scrape targets and synchronizes
// the currently running scraper with the resulting set.
func (sp *scrapePool) Sync(tgs []*targetgroupGroup) {
	sp.mtx.Lock()
	defer sp.mtx.Unlock()
	var all []*Target
	for _, tg := range tgs {
		for _, lset := range tg.Targets {
			lbls := map[string]string{"job": sp.config.JobName}
			for k, v := range lset {
				lbls[k] = v
			}
			all = append(all, &Target{labels: lbls})
		}
	}
	sp.sync(all)
}

// sync takes a list of potentially duplicated targets, deduplicates them,
// starts scrape loops for new targets, and stops scrape loops for disappeared
// targets. It returns after all stopped scrape loops terminated.
func (sp *scrapePool) sync(targets []*Target) {
	uniqueLoops := make(map[string]loop)
	interval, timeout := sp.config.ScrapeInterval, sp.config.ScrapeTimeout
	for _, t := range targets {
		hash := t.hash()
		if _, ok := sp.activeTargets[hash]; !ok {
			l := sp.newLoop(scrapeLoopOptions{target: t, interval: interval, timeout: timeout})
			sp.activeTargets[hash] = t
			sp.loops[hash] = l
			uniqueLoops[hash] = l
		}
	}
	var wg sync.WaitGroup
	for hash := range sp.activeTargets {
		found := false
		for _, t := range targets {
			if t.hash() == hash {
				found = true
				break
			}
		}
		if !found {
			wg.Add(1)
			go func(l loop) {
				l.stop()
				wg.Done()
			}(sp.loops[hash])
			delete(sp.loops, hash)
			delete(sp.activeTargets, hash)
		}
	}
	for _, l := range uniqueLoops {
		if l != nil {
			go l.run(nil)
		}
	}
	wg.Wait()
}

func (sp *scrapePool) stop() {
	sp.mtx.Lock()
	defer sp.mtx.Unlock()
	sp.cancel()
	for hash, l := range sp.loops {
		l.stop()
		delete(sp.loops, hash)
		delete(sp.activeTargets, hash)
	}
}

func TestScrapePoolSyncAddsTargets(t *testing.T) {
	sp := newScrapePool(&ScrapeConfig{JobName: "node", ScrapeInterval: 15 * time.Millisecond,
		ScrapeTimeout: 10 * time.Millisecond, HonorLabels: true, SampleLimit: 1000})

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // scrape.Manager.reload after a discovery update
		defer wg.Done()
		sp.Sync([]*targetgroupGroup{{Source: "file_sd/0", Targets: []map[string]string{
			{"__address__": "10.0.0.1:9100"}, {"__address__": "10.0.0.2:9100"},
		}}})
	}()
	wg.Wait()

	sp.mtx.Lock()
	n := len(sp.loops)
	for _, l := range sp.loops {
		if sl := l.(*scrapeLoop); !sl.honorLabels || sl.sampleLimit != 1000 {
			t.Errorf("loop not configured from pool config: %+v", sl)
		}
	}
	sp.mtx.Unlock()
	if n != 2 {
		t.Fatalf("got %d loops, want 2", n)
	}
	sp.stop()
}
