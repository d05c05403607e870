// kubernetes/kubernetes #12782 ("Fix deadlock in the cacher", ref #10475).
//
// The watch cache calls the Cacher back (SetOnEvent -> Cacher.processEvent)
// while it still holds its own write lock. Cacher.Watch took the Cacher lock
// first and only then asked the watch cache for the events since the
// requested resourceVersion, which read-locks the watch cache: the reflector
// goroutine holds watchCache and wants Cacher, the API request holds Cacher
// and wants watchCache.
package main

import (
	"fmt"
	"sync"
	"time"
)

type watchCacheEvent struct {
	Type            string
	Key             string
	ResourceVersion uint64
}

type WatchCache struct {
	sync.RWMutex
	cache           []watchCacheEvent
	store           map[string]string
	resourceVersion uint64
	onEvent         func(watchCacheEvent)
}

func (w *WatchCache) SetOnEvent(onEvent func(watchCacheEvent)) {
	w.Lock()
	defer w.Unlock()
	w.onEvent = onEvent
}

// Add is what the reflector calls for every object it sees from etcd.
func (w *WatchCache) Add(key, obj string, rv uint64) error {
	return w.processEvent("ADDED", key, obj, rv)
}

func (w *WatchCache) processEvent(typ, key, obj string, rv uint64) error {
	w.Lock()
	defer w.Unlock()
	w.updateStore(key, obj)
	ev := watchCacheEvent{Type: typ, Key: key, ResourceVersion: rv}
	w.cache = append(w.cache, ev)
	w.resourceVersion = rv
	if w.onEvent != nil {
		w.onEvent(ev)
	}
	return nil
}

func (w *WatchCache) updateStore(key, obj string) {
	time.Sleep(100 * time.Millisecond) // indexing a large object
	w.store[key] = obj
}

func (w *WatchCache) GetAllEventsSince(rv uint64) ([]watchCacheEvent, error) {
	w.RLock()
	defer w.RUnlock()
	return w.GetAllEventsSinceThreadUnsafe(rv)
}

func (w *WatchCache) GetAllEventsSinceThreadUnsafe(rv uint64) ([]watchCacheEvent, error) {
	var out []watchCacheEvent
	for _, ev := range w.cache {
		if ev.ResourceVersion > rv {
			out = append(out, ev)
		}
	}
	return out, nil
}

type cacheWatcher struct {
	mu     sync.Mutex
	events []watchCacheEvent
	filter func(string) bool
}

func (c *cacheWatcher) add(ev watchCacheEvent) {
	if !c.filter(ev.Key) {
		return
	}
	c.mu.Lock()
	c.events = append(c.events, ev)
	c.mu.Unlock()
}

type Cacher struct {
	sync.RWMutex
	watchCache *WatchCache
	watchers   map[int]*cacheWatcher
	watcherIdx int
}

func NewCacher(wc *WatchCache) *Cacher {
	c := &Cacher{watchCache: wc, watchers: map[int]*cacheWatcher{}}
	wc.SetOnEvent(c.processEvent)
	return c
}

func (c *Cacher) processEvent(ev watchCacheEvent) {
	c.Lock()
	defer c.Unlock()
	for _, w := range c.watchers {
		w.add(ev)
	}
}

// Watch implements storage.Interface.
func (c *Cacher) Watch(prefix string, rv uint64) (*cacheWatcher, error) {
	// We cannot take the Cacher lock first: the watch cache calls
	// processEvent (which takes it) under its own lock.
	c.watchCache.RLock()
	defer c.watchCache.RUnlock()
	initEvents, err := c.watchCache.GetAllEventsSinceThreadUnsafe(rv)
	if err != nil {
		return nil, err
	}

	c.Lock()
	defer c.Unlock()
	w := &cacheWatcher{filter: func(k string) bool { return len(k) >= len(prefix) && k[:len(prefix)] == prefix }}
	for _, ev := range initEvents {
		w.add(ev)
	}
	c.watchers[c.watcherIdx] = w
	c.watcherIdx++
	return w, nil
}

func main() {
	wc := &WatchCache{store: map[string]string{}}
	cacher := NewCacher(wc)
	wc.Add("/pods/default/a", "pod-a", 1)

	go wc.Add("/pods/default/b", "pod-b", 2) // reflector: next event from etcd

	time.Sleep(20 * time.Millisecond)
	w, err := cacher.Watch("/pods/default/", 1) // kubectl get pods -w
	if err != nil {
		panic(err)
	}
	wc.Add("/pods/default/c", "pod-c", 3)
	w.mu.Lock()
	fmt.Printf("watcher got %d events\n", len(w.events))
	w.mu.Unlock()
}
