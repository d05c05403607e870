// Project: grpc/grpc-go, v1.25 through v1.29 (xDS EDS balancer with the sub-balancer cache).
// Files: xds/internal/balancer/balancergroup/balancergroup.go (BalancerGroup.Add, BalancerGroup.Remove,
// the eviction callback Remove stores in the cache, BalancerGroup.Close) and internal/cache/timeoutCache.go
// (TimeoutCache.Add and its time.AfterFunc eviction, TimeoutCache.Remove, TimeoutCache.Clear,
// TimeoutCache.removeEntry).
// Issue: grpc/grpc-go#3602 "xds/internal: conflicting lock order in Remove() and Clear()".
// Fix: grpc/grpc-go#3603 "cache: callback without cache's mutex".
//
// A BalancerGroup keeps a removed locality's sub-balancer in a TimeoutCache for a while, so a
// locality that comes back quickly can reuse it. BalancerGroup.Remove holds bg.outgoingMu while it
// hands the sub-balancer to balancerCache.Add, which takes the cache's mu. The callback stored with
// the entry runs when the entry is evicted and takes bg.outgoingMu to stop the sub-balancer. The
// cache ran that callback from removeEntry while still holding its own mu, both on the timer
// eviction path and in Clear (used by Close). When the cache timer of one removed locality fires
// while another locality is being removed, the timer goroutine holds cache.mu and waits for
// outgoingMu, and Remove holds outgoingMu and waits for cache.mu. The fix makes removeEntry only
// unlink the entry; the timer path and Clear run the callbacks after releasing the cache mutex.
package main

import (
	"fmt"
	"sync"
	"time"
)

type cacheEntry struct {
	item     interface{}
	callback func()
	timer    *time.Timer
	deleted  bool
}

// TimeoutCache is internal/cache.TimeoutCache.
type TimeoutCache struct {
	mu      sync.Mutex
	timeout time.Duration
	cache   map[interface{}]*cacheEntry
}

func NewTimeoutCache(timeout time.Duration) *TimeoutCache {
	return &TimeoutCache{timeout: timeout, cache: make(map[interface{}]*cacheEntry)}
}

func (c *TimeoutCache) Add(key, item interface{}, callback func()) (interface{}, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.cache[key]; ok {
		return e.item, false
	}
	entry := &cacheEntry{item: item, callback: callback}
	entry.timer = time.AfterFunc(c.timeout, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if entry.deleted {
			return
		}
		c.removeEntry(key, true)
	})
	c.cache[key] = entry
	return item, true
}

func (c *TimeoutCache) Remove(key interface{}) (interface{}, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	entry, ok := c.removeEntry(key, false)
	if !ok {
		return nil, false
	}
	return entry.item, true
}

// removeEntry must be called with c.mu held.
func (c *TimeoutCache) removeEntry(key interface{}, runCallback bool) (*cacheEntry, bool) {
	entry, ok := c.cache[key]
	if !ok {
		return nil, false
	}
	delete(c.cache, key)
	if !entry.timer.Stop() {
		entry.deleted = true
	}
	if runCallback {
		entry.callback()
	}
	return entry, true
}

func (c *TimeoutCache) Clear(runCallback bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key := range c.cache {
		c.removeEntry(key, runCallback)
	}
}

type subBalancerWithConfig struct{ started bool }

func (sbc *subBalancerWithConfig) stopBalancer() { sbc.started = false }

// BalancerGroup is the EDS balancer's locality group.
type BalancerGroup struct {
	outgoingMu         sync.Mutex
	outgoingStarted    bool
	idToBalancerConfig map[string]*subBalancerWithConfig
	balancerCache      *TimeoutCache

	scMu            sync.Mutex
	scToSubBalancer map[string]*subBalancerWithConfig

	// raceWindow stands for the time the scheduler may leave Remove between
	// taking outgoingMu and reaching the cache; the reproduction makes it long.
	raceWindow time.Duration
}

func New(timeout time.Duration) *BalancerGroup {
	return &BalancerGroup{outgoingStarted: true, idToBalancerConfig: make(map[string]*subBalancerWithConfig),
		balancerCache: NewTimeoutCache(timeout), scToSubBalancer: make(map[string]*subBalancerWithConfig)}
}

func (bg *BalancerGroup) Add(id string) {
	bg.outgoingMu.Lock()
	defer bg.outgoingMu.Unlock()
	sbc := &subBalancerWithConfig{started: bg.outgoingStarted}
	if old, ok := bg.balancerCache.Remove(id); ok {
		sbc = old.(*subBalancerWithConfig)
	}
	bg.idToBalancerConfig[id] = sbc
}

func (bg *BalancerGroup) Remove(id string) {
	bg.outgoingMu.Lock()
	if sbToRemove, ok := bg.idToBalancerConfig[id]; ok {
		if bg.outgoingStarted {
			time.Sleep(bg.raceWindow)
			bg.balancerCache.Add(id, sbToRemove, func() {
				bg.outgoingMu.Lock()
				if bg.outgoingStarted {
					sbToRemove.stopBalancer()
				}
				bg.outgoingMu.Unlock()
				bg.cleanupSubConns(sbToRemove)
			})
		}
		delete(bg.idToBalancerConfig, id)
	}
	bg.outgoingMu.Unlock()
}

func (bg *BalancerGroup) cleanupSubConns(config *subBalancerWithConfig) {
	bg.scMu.Lock()
	defer bg.scMu.Unlock()
	for sc, b := range bg.scToSubBalancer {
		if b == config {
			delete(bg.scToSubBalancer, sc)
		}
	}
}

func (bg *BalancerGroup) Close() {
	bg.outgoingMu.Lock()
	if bg.outgoingStarted {
		bg.outgoingStarted = false
		for _, config := range bg.idToBalancerConfig {
			config.stopBalancer()
		}
	}
	bg.outgoingMu.Unlock()
	bg.balancerCache.Clear(true)
}

func main() {
	bg := New(100 * time.Millisecond)
	bg.Add("locality-A")
	bg.Add("locality-B")

	// EDS update drops locality A; its sub-balancer waits in the cache.
	bg.Remove("locality-A")

	// A later EDS update drops locality B while A's cache timer fires.
	time.Sleep(60 * time.Millisecond)
	bg.raceWindow = 100 * time.Millisecond
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		bg.Remove("locality-B")
	}()
	wg.Wait()
	bg.Close()
	fmt.Println("balancer group closed")
}
