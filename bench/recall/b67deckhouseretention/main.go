// Command b67deckhouseretention reproduces the shape of a self-deadlock
// shipped in deckhouse/deckhouse (the Kubernetes platform), in the
// registry-packages-proxy cache, fixed by PR #18505 ("[rpp] fix: possible
// deadlock in cache retention policy"). The cache code is reconstructed from
// the PR description, not copied.
//
// The retention loop locks the cache and defers the unlock inside a for
// loop. The deferred Unlock only runs when ApplyRetentionPolicy returns, so
// when disk usage is still above the high watermark after the first
// eviction, the second iteration calls Cache.Lock on the mutex it already
// holds. Every package request that needs the cache (Cache.Get) then blocks
// on the same mutex.
package main

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

type entry struct {
	digest     string
	size       int64
	lastAccess time.Time
}

// Storage reports disk usage of the cache volume and removes blobs.
type Storage interface {
	UsagePercent() float64
	Remove(digest string, size int64)
}

type volume struct {
	capacity, used int64
}

func (v *volume) UsagePercent() float64 { return float64(v.used) * 100 / float64(v.capacity) }
func (v *volume) Remove(digest string, size int64) {
	v.used -= size
}

type Cache struct {
	sync.Mutex
	entries       map[string]*entry
	storage       Storage
	highWatermark float64
}

func NewCache(storage Storage, highWatermark float64) *Cache {
	return &Cache{entries: map[string]*entry{}, storage: storage, highWatermark: highWatermark}
}

func (c *Cache) Add(digest string, size int64, lastAccess time.Time) {
	c.Lock()
	defer c.Unlock()
	c.entries[digest] = &entry{digest: digest, size: size, lastAccess: lastAccess}
}

// Get returns a cached package and refreshes its access time.
func (c *Cache) Get(digest string) (*entry, bool) {
	c.Lock()
	defer c.Unlock()
	e, ok := c.entries[digest]
	if ok {
		e.lastAccess = time.Now()
	}
	return e, ok
}

// oldestLocked must be called with the cache locked.
func (c *Cache) oldestLocked() *entry {
	all := make([]*entry, 0, len(c.entries))
	for _, e := range c.entries {
		all = append(all, e)
	}
	if len(all) == 0 {
		return nil
	}
	sort.Slice(all, func(i, j int) bool { return all[i].lastAccess.Before(all[j].lastAccess) })
	return all[0]
}

// removeLocked must be called with the cache locked.
func (c *Cache) removeLocked(e *entry) {
	delete(c.entries, e.digest)
	c.storage.Remove(e.digest, e.size)
	fmt.Printf("retention: evicted %s, usage now %.0f%%\n", e.digest, c.storage.UsagePercent())
}

// ApplyRetentionPolicy evicts the least recently used packages until the
// volume usage is below the high watermark.
func (c *Cache) ApplyRetentionPolicy() error {
	for {
		c.Lock()
		defer c.Unlock()

		if c.storage.UsagePercent() < c.highWatermark {
			return nil
		}
		victim := c.oldestLocked()
		if victim == nil {
			return fmt.Errorf("usage %.0f%% above watermark with an empty cache", c.storage.UsagePercent())
		}
		c.removeLocked(victim)
	}
}

// retentionLoop runs the policy periodically.
func retentionLoop(c *Cache, rounds int, every time.Duration) {
	for i := 0; i < rounds; i++ {
		if err := c.ApplyRetentionPolicy(); err != nil {
			fmt.Println("retention:", err)
		}
		time.Sleep(every)
	}
}

// Proxy serves packages from the cache, falling back to the registry.
type Proxy struct{ cache *Cache }

func (p *Proxy) ServePackage(digest string) string {
	if _, ok := p.cache.Get(digest); ok {
		return "cache hit " + digest
	}
	return "fetched " + digest + " from registry"
}

func main() {
	vol := &volume{capacity: 100, used: 95}
	cache := NewCache(vol, 80)
	now := time.Now()
	cache.Add("sha256:aaa", 10, now.Add(-3*time.Hour))
	cache.Add("sha256:bbb", 10, now.Add(-2*time.Hour))
	cache.Add("sha256:ccc", 10, now.Add(-1*time.Hour))
	proxy := &Proxy{cache: cache}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		retentionLoop(cache, 1, 10*time.Millisecond)
	}()
	go func() {
		defer wg.Done()
		time.Sleep(50 * time.Millisecond)
		fmt.Println(proxy.ServePackage("sha256:ccc"))
	}()
	wg.Wait()
}
