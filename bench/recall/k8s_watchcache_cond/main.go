// Modeled on the Kubernetes apiserver watch cache (storage/cacher):
// watchCache.waitUntilFreshAndBlock waits on w.cond (built from
// w.RLocker()) until resourceVersion catches up. A Cacher.Watch variant
// waited for freshness while holding the Cacher's own lock, but the
// dispatch path must take c.Lock() before it can feed the watchCache and
// Broadcast, so the waiter is never woken.
package main

import (
	"sync"
	"time"
)

type watchCache struct {
	sync.RWMutex
	cond            *sync.Cond
	resourceVersion uint64
}

func newWatchCache() *watchCache {
	wc := &watchCache{}
	wc.cond = sync.NewCond(wc.RLocker())
	return wc
}

func (w *watchCache) waitUntilFreshAndBlock(resourceVersion uint64) {
	w.RLock()
	defer w.RUnlock()
	for w.resourceVersion < resourceVersion {
		w.cond.Wait()
	}
}

func (w *watchCache) UpdateResourceVersion(rv uint64) {
	w.Lock()
	w.resourceVersion = rv
	w.Unlock()
	w.cond.Broadcast()
}

type Cacher struct {
	sync.RWMutex
	watchCache *watchCache
	watchers   map[int]chan uint64
	watcherIdx int
	incoming   chan uint64
}

func (c *Cacher) Watch(resourceVersion uint64) chan uint64 {
	c.Lock()
	defer c.Unlock()
	c.watchCache.waitUntilFreshAndBlock(resourceVersion)
	ch := make(chan uint64, 10)
	c.watchers[c.watcherIdx] = ch
	c.watcherIdx++
	return ch
}

func (c *Cacher) dispatchEvents() {
	for rv := range c.incoming {
		c.Lock()
		c.watchCache.UpdateResourceVersion(rv)
		for _, w := range c.watchers {
			select {
			case w <- rv:
			default:
			}
		}
		c.Unlock()
	}
}

func main() {
	c := &Cacher{watchCache: newWatchCache(), watchers: map[int]chan uint64{}, incoming: make(chan uint64)}
	go c.dispatchEvents()
	go func() { // reflector
		for rv := uint64(1); rv <= 10; rv++ {
			c.incoming <- rv
		}
	}()
	go c.Watch(5)
	time.Sleep(50 * time.Millisecond)
}
