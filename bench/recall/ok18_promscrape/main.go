// Package main models Prometheus' scrape manager reload (scrape/manager.go,
// ApplyConfig + scrapePool.stop): the reloader swaps in new scrape pools under
// m.mu and then calls stopPoolsLocked, which launches a goroutine per old
// pool, releases m.mu, waits on a WaitGroup, and re-acquires m.mu. Each
// stopping pool records its final sample count under m.mu before calling
// Done, so the wait can only finish because the lock was dropped.
package main

import (
	"fmt"
	"sort"
	"sync"
)

type scrapePool struct {
	job     string
	targets []string
	samples int
}

func (sp *scrapePool) stop() int {
	// stands in for cancelling loops and waiting for in-flight scrapes
	n := 0
	for range sp.targets {
		n += sp.samples
	}
	return n
}

type manager struct {
	mu          sync.Mutex
	pools       map[string]*scrapePool
	finalCounts map[string]int
	reloads     int
}

func newManager() *manager {
	return &manager{pools: map[string]*scrapePool{}, finalCounts: map[string]int{}}
}

// stopPoolsLocked is called with m.mu held and returns with it held.
func (m *manager) stopPoolsLocked(old []*scrapePool) {
	var wg sync.WaitGroup
	for _, sp := range old {
		wg.Add(1)
		go func(sp *scrapePool) {
			defer wg.Done()
			n := sp.stop()
			m.mu.Lock()
			m.finalCounts[sp.job] += n
			m.mu.Unlock()
		}(sp)
	}
	m.mu.Unlock()
	wg.Wait()
	m.mu.Lock()
}

func (m *manager) ApplyConfig(jobs map[string][]string, generation int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var old []*scrapePool
	for _, sp := range m.pools {
		old = append(old, sp)
	}
	fresh := make(map[string]*scrapePool, len(jobs))
	for job, targets := range jobs {
		fresh[job] = &scrapePool{job: job, targets: targets, samples: generation}
	}
	m.pools = fresh
	m.stopPoolsLocked(old)
	m.reloads++
}

func (m *manager) TargetsActive() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]int, len(m.pools))
	for job, sp := range m.pools {
		out[job] = len(sp.targets)
	}
	return out
}

func main() {
	m := newManager()
	cfg := map[string][]string{
		"node":       {"10.0.0.1:9100", "10.0.0.2:9100", "10.0.0.3:9100"},
		"prometheus": {"localhost:9090"},
		"cadvisor":   {"10.0.0.1:8080", "10.0.0.2:8080"},
	}

	var wg sync.WaitGroup
	// the /api/v1/targets handler polls concurrently
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				_ = m.TargetsActive()
			}
		}()
	}
	// single reloader goroutine (SIGHUP handler)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for gen := 1; gen <= 10; gen++ {
			m.ApplyConfig(cfg, gen)
		}
	}()
	wg.Wait()

	m.mu.Lock()
	defer m.mu.Unlock()
	jobs := make([]string, 0, len(m.finalCounts))
	for j := range m.finalCounts {
		jobs = append(jobs, j)
	}
	sort.Strings(jobs)
	for _, j := range jobs {
		fmt.Printf("%-11s final samples=%d\n", j, m.finalCounts[j])
	}
	// generations 1..9 were stopped: sum = 45 per target
	if m.reloads != 10 || m.finalCounts["node"] != 3*45 {
		panic("unexpected reload accounting")
	}
}
