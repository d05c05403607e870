// Pattern: kubernetes staging/src/k8s.io/apiserver/pkg/storage/cacher
// watchCache + cacheWatcher: a new watcher is registered under the cache
// lock and the buffered history since its resourceVersion is replayed into
// its fresh result channel while the lock is held. The history ring never
// exceeds the channel capacity, so that replay cannot block. Live events are
// appended under the lock, but the fan-out to watchers happens after the
// lock has been released.
package main

import (
	"fmt"
	"sync"
	"time"
)

const historySize = 64 // ring size; watcher channels are at least this large

type event struct {
	Type string
	Key  string
	RV   uint64
}

type cacheWatcher struct {
	id     int
	result chan event
}

type watchCache struct {
	mu       sync.Mutex
	rv       uint64
	history  []event
	watchers map[int]*cacheWatcher
	nextID   int
}

func (c *watchCache) Watch(sinceRV uint64) *cacheWatcher {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := &cacheWatcher{id: c.nextID, result: make(chan event, historySize)}
	c.nextID++
	for _, e := range c.history { // at most historySize entries
		if e.RV > sinceRV {
			w.result <- e
		}
	}
	c.watchers[w.id] = w
	return w
}

func (c *watchCache) Process(typ, key string) {
	c.mu.Lock()
	c.rv++
	e := event{Type: typ, Key: key, RV: c.rv}
	c.history = append(c.history, e)
	if len(c.history) > historySize {
		c.history = c.history[len(c.history)-historySize:]
	}
	targets := make([]*cacheWatcher, 0, len(c.watchers))
	for _, w := range c.watchers {
		targets = append(targets, w)
	}
	c.mu.Unlock()

	for _, w := range targets {
		w.result <- e
	}
}

func (c *watchCache) currentRV() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rv
}

// Stop closes all watchers; the single Process caller must have returned.
func (c *watchCache) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, w := range c.watchers {
		close(w.result)
		delete(c.watchers, id)
	}
}

func main() {
	c := &watchCache{watchers: make(map[int]*cacheWatcher)}
	var wg sync.WaitGroup

	startWatcher := func(since uint64) {
		w := c.Watch(since)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var n int
			var maxLag uint64
			for e := range w.result {
				n++
				if lag := c.currentRV() - e.RV; lag > maxLag {
					maxLag = lag
				}
				time.Sleep(20 * time.Microsecond)
			}
			fmt.Printf("watcher %d: events=%d maxLag=%d\n", w.id, n, maxLag)
		}()
	}

	startWatcher(0)
	done := make(chan struct{})
	go func() { // the reflector feeding the cache
		defer close(done)
		for i := 0; i < 2000; i++ {
			c.Process("MODIFIED", fmt.Sprintf("default/pod-%d", i%37))
		}
	}()
	for i := 0; i < 3; i++ {
		time.Sleep(2 * time.Millisecond)
		rv := c.currentRV()
		if rv > 10 {
			rv -= 10
		}
		startWatcher(rv)
	}
	<-done
	c.Stop()
	wg.Wait()
}
