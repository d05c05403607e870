// FIXED twin. Project: kubernetes/kubernetes — staging/src/k8s.io/apiserver/pkg/storage/cacher
// (cacher.go, watch_cache.go), WatchList / streaming initial events.
// Fix PR kubernetes/kubernetes#117137 ("cacher: prevent a potential deadlock").
//
// Cacher.Watch takes c.watchCache.RLock() (so no event is processed while
// the watcher is registered) and only then calls
// waitUntilWatchCacheFreshAndForceAllEvents, which for SendInitialEvents=true
// calls watchCache.waitUntilFreshAndBlock: it RLocks again and Waits on
// w.cond (built on w.RLocker()) until the cache reaches the requested RV.
// Cond.Wait only drops the inner read lock; the outer one stays held, so the
// reflector's watchCache.processEvent can never get w.Lock() to advance the
// resourceVersion and Broadcast. When the blockTimeout broadcast fires, the
// waiter's re-RLock is queued behind the pending writer: permanent deadlock.
// The waiter blocks in w.cond.Wait() (line 70); processEvent blocks at
// w.Lock() (line 78).
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

const blockTimeout = 200 * time.Millisecond

type ListOptions struct {
	ResourceVersion   uint64
	SendInitialEvents *bool
}

type watchCacheEvent struct {
	Key             string
	ResourceVersion uint64
}

type watchCache struct {
	sync.RWMutex
	// cond is used to wait until the cache reaches a given resourceVersion.
	cond            *sync.Cond
	resourceVersion uint64
	events          []*watchCacheEvent
}

func newWatchCache() *watchCache {
	wc := &watchCache{}
	wc.cond = sync.NewCond(wc.RLocker())
	return wc
}

// waitUntilFreshAndBlock waits until cache is at least as fresh as given
// resourceVersion. NOTE: This function acquires the RLock on watchCache and
// returns with it held; the caller must call RUnlock.
func (w *watchCache) waitUntilFreshAndBlock(ctx context.Context, resourceVersion uint64) error {
	startTime := time.Now()
	go func() {
		// Wake us up when the time limit has expired. The docs promise that
		// time.After (well, NewTimer, which it calls) will wait *at least* the
		// duration given.
		<-time.After(blockTimeout)
		w.cond.Broadcast()
	}()

	w.RLock()
	for w.resourceVersion < resourceVersion {
		if time.Since(startTime) >= blockTimeout {
			return errors.New("Too large resource version")
		}
		w.cond.Wait()
	}
	return nil
}

// processEvent is called by the reflector (via Add/Update/Delete) for every
// event received from etcd.
func (w *watchCache) processEvent(ev *watchCacheEvent) {
	w.Lock()
	defer w.Unlock()
	w.events = append(w.events, ev)
	w.resourceVersion = ev.ResourceVersion
	w.cond.Broadcast()
}

func (w *watchCache) getAllEventsSinceLocked(rv uint64) []*watchCacheEvent {
	var out []*watchCacheEvent
	for _, e := range w.events {
		if e.ResourceVersion > rv {
			out = append(out, e)
		}
	}
	return out
}

type Cacher struct {
	watchCache *watchCache
}

func (c *Cacher) waitUntilWatchCacheFreshAndForceAllEvents(ctx context.Context, requestedWatchRV uint64, opts ListOptions) (bool, error) {
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		err := c.watchCache.waitUntilFreshAndBlock(ctx, requestedWatchRV)
		defer c.watchCache.RUnlock()
		return err == nil, err
	}
	return false, nil
}

// Watch implements storage.Interface.
func (c *Cacher) Watch(ctx context.Context, key string, opts ListOptions) (int, error) {
	requestedWatchRV := opts.ResourceVersion
	// We explicitly use thread unsafe version and do locking ourself to ensure that
	// no new events will be processed in the meantime.
	// FIX (PR #117137): c.waitUntilWatchCacheFreshAndForceAllEvents must be
	// called without the c.watchCache.RLock held, otherwise processEvent
	// (which needs the exclusive lock) cannot make progress.
	forceAllEvents, err := c.waitUntilWatchCacheFreshAndForceAllEvents(ctx, requestedWatchRV, opts)
	if err != nil {
		return 0, err
	}
	c.watchCache.RLock()
	defer c.watchCache.RUnlock()
	initEvents := c.watchCache.getAllEventsSinceLocked(0)
	_ = forceAllEvents
	return len(initEvents), nil
}

func main() {
	c := &Cacher{watchCache: newWatchCache()}
	sendInitialEvents := true

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // kubectl get pods --watch with WatchList (streaming) enabled
		defer wg.Done()
		n, err := c.Watch(context.Background(), "/pods", ListOptions{ResourceVersion: 105, SendInitialEvents: &sendInitialEvents})
		fmt.Println("initial events:", n, err)
	}()
	go func() { // reflector delivering the event the watcher waits for
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		c.watchCache.processEvent(&watchCacheEvent{Key: "/pods/default/nginx", ResourceVersion: 105})
	}()
	wg.Wait()
	fmt.Println("done")
}
