// Pattern A. Modelled on a groupcache/ristretto-style sharded counter cache:
// the shard count is computed once in the constructor (clamped to >= 1) and
// never written again, so the lazy-init branch under the lock is dead.
package main

import (
	"fmt"
	"hash/fnv"
	"sync"
)

type counterCache struct {
	mu      sync.Mutex
	nshards int // set only in newCounterCache, always >= 1
	shards  []map[string]int
	inits   int
}

func newCounterCache(requested int) *counterCache {
	n := requested
	if n < 1 {
		n = 1
	}
	// round up to a power of two, as many sharded caches do
	p := 1
	for p < n {
		p <<= 1
	}
	c := &counterCache{nshards: p}
	c.shards = make([]map[string]int, p)
	for i := range c.shards {
		c.shards[i] = make(map[string]int)
	}
	return c
}

// lazyInit is the fallback for a zero-value cache; it locks on every path.
func (c *counterCache) lazyInit() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nshards = 1
	c.shards = []map[string]int{make(map[string]int)}
	c.inits++
}

func (c *counterCache) shardFor(key string) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32()) & (c.nshards - 1)
}

// Incr would deadlock if it reached lazyInit, but nshards was computed as
// >= 1 by the constructor and nothing ever lowers it.
func (c *counterCache) Incr(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.nshards == 0 {
		c.lazyInit()
	}
	s := c.shards[c.shardFor(key)]
	s[key]++
	return s[key]
}

func (c *counterCache) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := 0
	for _, s := range c.shards {
		for _, v := range s {
			t += v
		}
	}
	return t
}

func main() {
	caches := []*counterCache{newCounterCache(0), newCounterCache(3), newCounterCache(16)}
	var wg sync.WaitGroup
	for _, c := range caches {
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func(c *counterCache, g int) {
				defer wg.Done()
				for i := 0; i < 300; i++ {
					c.Incr(fmt.Sprintf("k%d", (g*7+i)%23))
				}
			}(c, g)
		}
	}
	wg.Wait()
	for _, c := range caches {
		fmt.Println("shards", c.nshards, "total", c.Total(), "inits", c.inits)
	}
}
