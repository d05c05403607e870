// Project: kubernetes (staging/src/k8s.io/apiserver/pkg/storage/cacher/watch_cache.go)
// Bug: waitUntilFreshAndBlock returns with w.RLock held (cond built on
// w.RLocker()); on a cache miss WaitUntilFreshAndGet went through a helper
// that forced a resync of the store under w.Lock() while the read lock was
// still held by the same goroutine: RLock -> Lock upgrade, self deadlock.
package main

import (
	"fmt"
	"sync"
	"time"
)

const blockTimeout = 3 * time.Second

type watchCache struct {
	sync.RWMutex
	cond            *sync.Cond
	resourceVersion uint64
	store           map[string]interface{}
}

func newWatchCache() *watchCache {
	wc := &watchCache{store: make(map[string]interface{})}
	wc.cond = sync.NewCond(wc.RLocker())
	return wc
}

func (w *watchCache) processEvent(key string, obj interface{}, rv uint64) {
	w.Lock()
	defer w.Unlock()
	w.store[key] = obj
	w.resourceVersion = rv
	w.cond.Broadcast()
}

// waitUntilFreshAndBlock waits until the cache is at least as fresh as rv.
// NOTE: it acquires the read lock and does not release it; callers HAVE TO
// call w.RUnlock() afterwards.
func (w *watchCache) waitUntilFreshAndBlock(rv uint64) error {
	start := time.Now()
	go func() {
		<-time.After(blockTimeout)
		w.cond.Broadcast()
	}()
	w.RLock()
	for w.resourceVersion < rv {
		if time.Since(start) >= blockTimeout {
			return fmt.Errorf("too large resource version: %d, current: %d", rv, w.resourceVersion)
		}
		w.cond.Wait()
	}
	return nil
}

func (w *watchCache) WaitUntilFreshAndGet(rv uint64, key string) (interface{}, bool, uint64, error) {
	err := w.waitUntilFreshAndBlock(rv)
	defer w.RUnlock()
	if err != nil {
		return nil, false, 0, err
	}
	obj, exists := w.store[key]
	if !exists {
		obj, exists = w.getOrResync(key)
	}
	return obj, exists, w.resourceVersion, nil
}

func (w *watchCache) getOrResync(key string) (interface{}, bool) {
	w.resync()
	obj, exists := w.store[key]
	return obj, exists
}

func (w *watchCache) resync() {
	w.Lock() // read lock already held by WaitUntilFreshAndGet
	defer w.Unlock()
	for k, v := range w.store {
		if v == nil {
			delete(w.store, k)
		}
	}
}

func main() {
	w := newWatchCache()
	go func() { // reflector
		for rv := uint64(1); rv <= 5; rv++ {
			w.processEvent(fmt.Sprintf("pod-%d", rv), rv, rv)
			time.Sleep(10 * time.Millisecond)
		}
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fmt.Println(w.WaitUntilFreshAndGet(3, "pod-missing"))
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
	}
}
