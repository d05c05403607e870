// Shape of kubernetes/kubernetes #12782 ("Fix deadlock in the cacher",
// apiserver watch cache, 2015).
//
// Cacher.Watch held the Cacher lock and then read the history from the
// watchCache (watchCache read lock). The reflector feeding the cache calls
// watchCache.Add, which holds the watchCache write lock while invoking the
// onEvent callback installed by NewCacher: Cacher.processEvent, which needs
// the Cacher lock. The fix takes the watchCache read lock first and reads the
// history with the thread-unsafe getter, then takes the Cacher lock.
package main

import (
	"fmt"
	"sync"
	"time"
)

type EventType string

type watchCacheEvent struct {
	Type            EventType
	Object          string
	ResourceVersion uint64
}

// Store is what the reflector writes into.
type Store interface {
	Add(obj string) error
}

type watchCache struct {
	sync.RWMutex
	cache           []watchCacheEvent
	capacity        int
	resourceVersion uint64
	onEvent         func(watchCacheEvent)
}

func newWatchCache(capacity int) *watchCache { return &watchCache{capacity: capacity} }

func (w *watchCache) SetOnEvent(onEvent func(watchCacheEvent)) {
	w.Lock()
	defer w.Unlock()
	w.onEvent = onEvent
}

func (w *watchCache) Add(obj string) error {
	return w.processEvent(watchCacheEvent{Type: "ADDED", Object: obj})
}

func (w *watchCache) processEvent(event watchCacheEvent) error {
	w.Lock()
	defer w.Unlock()
	w.resourceVersion++
	event.ResourceVersion = w.resourceVersion
	if w.onEvent != nil {
		w.onEvent(event) // called under the watchCache lock
	}
	w.cache = append(w.cache, event)
	if len(w.cache) > w.capacity {
		w.cache = w.cache[1:]
	}
	return nil
}

func (w *watchCache) GetAllEventsSinceThreadUnsafe(rv uint64) ([]watchCacheEvent, error) {
	var out []watchCacheEvent
	for _, e := range w.cache {
		if e.ResourceVersion > rv {
			out = append(out, e)
		}
	}
	return out, nil
}

func (w *watchCache) GetAllEventsSince(rv uint64) ([]watchCacheEvent, error) {
	w.RLock()
	defer w.RUnlock()
	return w.GetAllEventsSinceThreadUnsafe(rv)
}

type cacheWatcher struct {
	input chan watchCacheEvent
}

func newCacheWatcher(initEvents []watchCacheEvent) *cacheWatcher {
	w := &cacheWatcher{input: make(chan watchCacheEvent, 64)}
	for _, e := range initEvents {
		w.input <- e
	}
	return w
}

func (w *cacheWatcher) add(e watchCacheEvent) { w.input <- e }

// test hook to order the interleaving deterministically
var watchHook = func() {}

type Cacher struct {
	sync.RWMutex
	storage    Store
	watchCache *watchCache
	watcherIdx int
	watchers   map[int]*cacheWatcher
}

func NewCacher(capacity int) *Cacher {
	wc := newWatchCache(capacity)
	c := &Cacher{watchCache: wc, storage: wc, watchers: make(map[int]*cacheWatcher)}
	wc.SetOnEvent(c.processEvent)
	return c
}

func (c *Cacher) Watch(key string, resourceVersion uint64) (*cacheWatcher, error) {
	// fix (#12782): lock the watchCache first, so no new events are processed
	// meanwhile, then take the Cacher lock (same order as processEvent).
	c.watchCache.RLock()
	defer c.watchCache.RUnlock()
	watchHook()
	initEvents, err := c.watchCache.GetAllEventsSinceThreadUnsafe(resourceVersion)
	if err != nil {
		return nil, err
	}
	c.Lock()
	defer c.Unlock()
	watcher := newCacheWatcher(initEvents)
	c.watchers[c.watcherIdx] = watcher
	c.watcherIdx++
	return watcher, nil
}

func (c *Cacher) processEvent(event watchCacheEvent) {
	c.Lock()
	defer c.Unlock()
	for _, watcher := range c.watchers {
		watcher.add(event)
	}
}

// reflector lists/watches etcd and pushes into the Store.
func runReflector(store Store, objs []string) {
	for _, o := range objs {
		store.Add(o)
	}
}

func main() {
	c := NewCacher(100)
	runReflector(c.storage, []string{"pods/default/a"})

	watchHolds := make(chan struct{})
	watchHook = func() {
		close(watchHolds)
		time.Sleep(100 * time.Millisecond) // an etcd event arrives meanwhile
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // GET /api/v1/pods?watch=true&resourceVersion=0
		defer wg.Done()
		w, err := c.Watch("/pods", 0)
		if err == nil {
			fmt.Println("watch started with", len(w.input), "initial events")
		}
	}()
	go func() { // reflector
		defer wg.Done()
		<-watchHolds
		runReflector(c.storage, []string{"pods/default/b"})
		fmt.Println("reflector delivered pods/default/b")
	}()
	wg.Wait()
	fmt.Println("done")
}
