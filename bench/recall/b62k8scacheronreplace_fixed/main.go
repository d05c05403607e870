// kubernetes/kubernetes #13135 ("Fix deadlock in Cacher on etcd errors", ref #10475).
//
// startCaching write-locks the Cacher so that no LIST/WATCH is served until
// the cache is filled, and deliberately does not unlock: the watch cache's
// onReplace callback (installed by NewCacher) does, once the reflector's
// LIST has been stored. When etcd fails the LIST itself, Replace never runs,
// the lock stays held, and the next round of the caching loop calls
// startCaching -> c.Lock() on its own lock. Every List/Watch blocks too.
package main

import (
	"errors"
	"fmt"
	"log"
	"sync"
	"time"
)

type fakeEtcd struct {
	mu      sync.Mutex
	lists   []error // results of successive LIST calls
	watched int
}

func (e *fakeEtcd) List() ([]string, uint64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var err error
	if len(e.lists) > 0 {
		err, e.lists = e.lists[0], e.lists[1:]
	}
	if err != nil {
		return nil, 0, err
	}
	return []string{"/pods/default/a", "/pods/default/b"}, 7, nil
}

func (e *fakeEtcd) Watch(stopCh <-chan struct{}) error {
	e.mu.Lock()
	e.watched++
	first := e.watched == 1
	e.mu.Unlock()
	if first {
		return errors.New("watch of *api.Pod ended: etcd cluster is unavailable or misconfigured")
	}
	<-stopCh
	return nil
}

type WatchCache struct {
	sync.RWMutex
	items     []string
	rv        uint64
	onReplace func()
}

func (w *WatchCache) SetOnReplace(f func()) { w.Lock(); w.onReplace = f; w.Unlock() }

func (w *WatchCache) Replace(items []string, rv uint64) {
	w.Lock()
	defer w.Unlock()
	w.items, w.rv = items, rv
	if w.onReplace != nil {
		w.onReplace()
	}
}

func (w *WatchCache) List() []string {
	w.RLock()
	defer w.RUnlock()
	return append([]string(nil), w.items...)
}

type Reflector struct {
	name  string
	lw    *fakeEtcd
	store *WatchCache
}

func (r *Reflector) ListAndWatch(stopCh <-chan struct{}) error {
	list, rv, err := r.lw.List()
	if err != nil {
		return fmt.Errorf("%s: Failed to list *api.Pod: %v", r.name, err)
	}
	r.store.Replace(list, rv)
	return r.lw.Watch(stopCh)
}

type Cacher struct {
	// usable is RLock'able only while it is safe to use the cache: after a
	// successful list until a disconnection.
	usable     sync.RWMutex
	watchCache *WatchCache
	reflector  *Reflector
}

func NewCacher(etcd *fakeEtcd, stopCh chan struct{}) *Cacher {
	wc := &WatchCache{}
	c := &Cacher{watchCache: wc, reflector: &Reflector{name: "pkg/storage/cacher.go:160", lw: etcd, store: wc}}
	c.usable.Lock()
	go func() { // wait.Until(func() { c.startCaching(stopCh) }, 0, stopCh)
		for {
			select {
			case <-stopCh:
				return
			default:
			}
			c.startCaching(stopCh)
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return c
}

func (c *Cacher) startCaching(stopChannel <-chan struct{}) {
	// usable starts write-locked; onReplace unlocks it after a successful
	// list, and the defer re-locks it only if that happened.
	successfulList := false
	c.watchCache.SetOnReplace(func() {
		successfulList = true
		c.usable.Unlock()
	})
	defer func() {
		if successfulList {
			c.usable.Lock()
		}
	}()
	c.terminateAllWatchers()
	if err := c.reflector.ListAndWatch(stopChannel); err != nil {
		log.Printf("unexpected ListAndWatch error: %v", err)
	}
}

func (c *Cacher) terminateAllWatchers() {}

// List implements storage.Interface; it must not see a half-filled cache.
func (c *Cacher) List(prefix string) []string {
	c.usable.RLock()
	defer c.usable.RUnlock()
	return c.watchCache.List()
}

func main() {
	etcd := &fakeEtcd{lists: []error{nil, errors.New("client: etcd cluster is unavailable or misconfigured"), nil}}
	stopCh := make(chan struct{})
	cacher := NewCacher(etcd, stopCh)

	time.Sleep(200 * time.Millisecond) // etcd comes back; an apiserver LIST arrives
	fmt.Printf("GET /api/v1/pods: %v\n", cacher.List("/pods/"))
	close(stopCh)
}
