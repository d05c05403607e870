// Project: kubernetes/kubernetes (staging/src/k8s.io/apiserver/pkg/storage/cacher).
// Bug (approximate): Cacher.Stop() kept c.stopLock write-locked while it
// closed stopCh and waited on c.stopWg for the dispatchEvents goroutine;
// dispatchEvents, in the middle of dispatching an event, calls c.isStopped(),
// which needs c.stopLock.RLock(), so it never returns and never calls Done().
// Fix: Stop() unlocks stopLock before close(c.stopCh) and c.stopWg.Wait().
package k8scacherstop

import (
	"sync"
	"testing"
	"time"
)

type watchCacheEvent struct {
	Type            string
	Key             string
	ResourceVersion uint64
}

type cacheWatcher struct {
	input   chan *watchCacheEvent
	stopped bool
}

func (w *cacheWatcher) nonblockingAdd(ev *watchCacheEvent) bool {
	select {
	case w.input <- ev:
		return true
	default:
		return false
	}
}

type Cacher struct {
	sync.RWMutex // protects watchers
	watchers     map[int]*cacheWatcher

	incoming chan watchCacheEvent

	stopLock sync.RWMutex
	stopped  bool
	stopCh   chan struct{}
	stopWg   sync.WaitGroup
}

func NewCacher() *Cacher {
	c := &Cacher{
		watchers: map[int]*cacheWatcher{},
		incoming: make(chan watchCacheEvent, 100),
		stopCh:   make(chan struct{}),
	}
	c.stopWg.Add(1)
	go func() {
		defer c.stopWg.Done()
		c.dispatchEvents()
	}()
	return c
}

func (c *Cacher) isStopped() bool {
	c.stopLock.RLock()
	defer c.stopLock.RUnlock()
	return c.stopped
}

func (c *Cacher) dispatchEvents() {
	for {
		select {
		case ev, ok := <-c.incoming:
			if !ok {
				return
			}
			c.dispatchEvent(&ev)
		case <-c.stopCh:
			return
		}
	}
}

func (c *Cacher) dispatchEvent(ev *watchCacheEvent) {
	c.Lock()
	defer c.Unlock()
	time.Sleep(50 * time.Millisecond) // serializing the object for watchers
	for id, w := range c.watchers {
		if w.nonblockingAdd(ev) {
			continue
		}
		// Watcher is blocked; terminate it unless the cacher is going away.
		if c.isStopped() {
			return
		}
		w.stopped = true
		delete(c.watchers, id)
	}
}

func (c *Cacher) Stop() {
	c.stopLock.Lock()
	defer c.stopLock.Unlock()
	if c.stopped {
		return
	}
	c.stopped = true
	close(c.stopCh)
	c.stopWg.Wait() // BUG: waits for dispatchEvents while holding stopLock
}

func TestCacherStopWhileDispatching(t *testing.T) {
	c := NewCacher()
	c.Lock()
	c.watchers[1] = &cacheWatcher{input: make(chan *watchCacheEvent)} // slow consumer
	c.Unlock()
	c.incoming <- watchCacheEvent{Type: "ADDED", Key: "/pods/default/a", ResourceVersion: 10}

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		c.Stop()
	}()
	wg.Wait()
}
