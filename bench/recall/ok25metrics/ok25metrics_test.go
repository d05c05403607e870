// Pattern: sharded metrics registry. Observe locks a shard and reaches the
// series through seriesLocked, which looks the shard up again by name and
// touches its map without locking. Merge locks the two shards in ascending
// index order. Gather spawns one scraper per shard while holding r.mu,
// unlocks, then waits; each scraper's deferred cleanup calls wg.Done before
// taking r.mu to count the scrape.
package ok25metrics

import (
	"fmt"
	"hash/maphash"
	"sync"
	"testing"
	"time"
)

const numShards = 16

type series struct {
	count int64
	sum   float64
}

type shard struct {
	mu   sync.Mutex
	vals map[string]*series
}

type Registry struct {
	seed   maphash.Seed
	shards [numShards]*shard

	mu      sync.Mutex
	gathers int
	scraped int
}

func NewRegistry() *Registry {
	r := &Registry{seed: maphash.MakeSeed()}
	for i := range r.shards {
		r.shards[i] = &shard{vals: make(map[string]*series)}
	}
	return r
}

func (r *Registry) idx(name string) int {
	return int(maphash.String(r.seed, name) % numShards)
}

func (r *Registry) shardOf(name string) *shard { return r.shards[r.idx(name)] }

// seriesLocked returns (creating if needed) the series for name. The caller
// must hold the mutex of shardOf(name).
func (r *Registry) seriesLocked(name string) *series {
	sh := r.shardOf(name)
	s := sh.vals[name]
	if s == nil {
		s = &series{}
		sh.vals[name] = s
	}
	return s
}

func (r *Registry) Observe(name string, v float64) {
	sh := r.shardOf(name)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s := r.seriesLocked(name)
	s.count++
	s.sum += v
}

// Merge folds src into dst and removes src.
func (r *Registry) Merge(src, dst string) {
	if src == dst {
		return
	}
	a, b := r.idx(src), r.idx(dst)
	if a > b {
		a, b = b, a
	}
	r.shards[a].mu.Lock()
	defer r.shards[a].mu.Unlock()
	if b != a {
		r.shards[b].mu.Lock()
		defer r.shards[b].mu.Unlock()
	}
	s, ok := r.shardOf(src).vals[src]
	if !ok {
		return
	}
	d := r.seriesLocked(dst)
	d.count += s.count
	d.sum += s.sum
	delete(r.shardOf(src).vals, src)
}

func (r *Registry) Gather() map[string]int64 {
	out := make(map[string]int64)
	var wg sync.WaitGroup
	r.mu.Lock()
	r.gathers++
	for _, sh := range r.shards {
		wg.Add(1)
		go func(sh *shard) {
			defer func() {
				wg.Done()
				r.mu.Lock()
				r.scraped++
				r.mu.Unlock()
			}()
			sh.mu.Lock()
			local := make(map[string]int64, len(sh.vals))
			for k, s := range sh.vals {
				local[k] = s.count
			}
			sh.mu.Unlock()
			r.mu.Lock()
			for k, v := range local {
				out[k] = v
			}
			r.mu.Unlock()
		}(sh)
	}
	r.mu.Unlock()
	wg.Wait()
	return out
}

func (r *Registry) scrapeStats() (gathers, scraped int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gathers, r.scraped
}

func TestRegistryObserveMergeGather(t *testing.T) {
	reg := NewRegistry()
	names := make([]string, 40)
	for i := range names {
		names[i] = fmt.Sprintf("http_requests_%d", i)
	}
	const workers, per = 8, 300

	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				reg.Observe(names[(w*7+i)%len(names)], float64(i))
				switch {
				case i%50 == 0:
					reg.Merge(names[(w+i)%len(names)], names[(w+i+13)%len(names)])
				case i%75 == 0:
					if len(reg.Gather()) == 0 {
						t.Errorf("gather returned no series after observations")
					}
				}
			}
		}(w)
	}
	wg.Wait()

	var total int64
	for _, c := range reg.Gather() {
		total += c
	}
	if total != workers*per {
		t.Fatalf("total count %d, want %d", total, workers*per)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		g, s := reg.scrapeStats()
		if s == g*numShards {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("scraped %d shards over %d gathers", s, g)
		}
		time.Sleep(time.Millisecond)
	}
}
