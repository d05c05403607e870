// Style: like the prometheus scrape pool sync. Each scrape loop records its
// result and reports completion on a channel while holding the pool lock. The
// channel's capacity equals the number of targets, so the send never blocks,
// and the collector drains it (also under the lock) only after wg.Wait.
package main

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

type scrapeResult struct {
	target  string
	samples int
	dur     time.Duration
}

type scrapePool struct {
	mu      sync.Mutex
	last    map[string]scrapeResult
	doneCh  chan string
	targets []string
}

func newScrapePool(targets []string) *scrapePool {
	return &scrapePool{
		last:    make(map[string]scrapeResult),
		doneCh:  make(chan string, len(targets)), // one slot per scrape loop
		targets: targets,
	}
}

func (p *scrapePool) scrape(t string) {
	start := time.Now()
	n := len(t) * 3 // pretend we parsed an exposition
	time.Sleep(time.Millisecond)

	p.mu.Lock()
	p.last[t] = scrapeResult{target: t, samples: n, dur: time.Since(start)}
	p.doneCh <- t // buffered: at most len(targets) sends ever happen
	p.mu.Unlock()
}

func (p *scrapePool) sync() []string {
	var wg sync.WaitGroup
	for _, t := range p.targets {
		wg.Add(1)
		go func(t string) {
			defer wg.Done()
			p.scrape(t)
		}(t)
	}
	wg.Wait()

	p.mu.Lock()
	defer p.mu.Unlock()
	done := make([]string, 0, len(p.targets))
	for range p.targets {
		t := <-p.doneCh // all sends completed before wg.Wait returned
		done = append(done, fmt.Sprintf("%s=%d", t, p.last[t].samples))
	}
	sort.Strings(done)
	return done
}

func main() {
	p := newScrapePool([]string{"node:9100", "api:8080", "db:9187", "cache:9121"})
	for round := 0; round < 3; round++ {
		fmt.Println("round", round, p.sync())
	}
}
