// Project: kubernetes (staging/src/k8s.io/apiserver/pkg/storage/cacher).
// Bug (approximate, from memory): Cacher.dispatchEvent() held the Cacher
// lock while delivering the event to every cacheWatcher with a blocking
// send on the watcher's input channel (cacheWatcher.add). A client that
// stops reading and calls Stop() on its watch goes through the forget
// callback, which needs the Cacher lock to unregister the watcher. With the
// watcher's buffers full, dispatchEvent waits for the client, and the client
// waits for the Cacher lock: the whole apiserver watch cache for that
// resource wedges. Fixed (k8s ~1.4-1.6 era, exact PR not remembered) by
// giving add() a timeout after which the slow watcher is terminated.
package k8s_cacher

import (
	"sync"
	"testing"
	"time"
)

type EventType string

const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
)

type Object struct {
	Name            string
	ResourceVersion uint64
}

// watch.Event / watch.Interface
type Event struct {
	Type   EventType
	Object *Object
}

type Interface interface {
	Stop()
	ResultChan() <-chan Event
}

type watchCacheEvent struct {
	Type            EventType
	Object          *Object
	ResourceVersion uint64
}

// ---- cacheWatcher ----

type cacheWatcher struct {
	sync.Mutex
	input   chan *watchCacheEvent
	result  chan Event
	done    chan struct{}
	stopped bool
	forget  func()
}

func newCacheWatcher(chanSize int, forget func()) *cacheWatcher {
	w := &cacheWatcher{
		input:  make(chan *watchCacheEvent, chanSize),
		result: make(chan Event),
		done:   make(chan struct{}),
		forget: forget,
	}
	go w.process()
	return w
}

// Implements watch.Interface.
func (c *cacheWatcher) ResultChan() <-chan Event { return c.result }

// Implements watch.Interface.
func (c *cacheWatcher) Stop() {
	c.forget()
	c.stop()
}

func (c *cacheWatcher) stop() {
	c.Lock()
	defer c.Unlock()
	if !c.stopped {
		c.stopped = true
		close(c.done)
		close(c.input)
	}
}

func (c *cacheWatcher) add(event *watchCacheEvent) {
	c.input <- event // DEADLOCK HERE
}

func (c *cacheWatcher) sendWatchCacheEvent(event *watchCacheEvent) {
	select {
	case c.result <- Event{Type: event.Type, Object: event.Object}:
	case <-c.done:
	}
}

func (c *cacheWatcher) process() {
	defer close(c.result)
	for event := range c.input {
		c.sendWatchCacheEvent(event)
	}
}

// ---- Cacher ----

type indexedWatchers struct {
	allWatchers map[int]*cacheWatcher
}

func (i *indexedWatchers) addWatcher(w *cacheWatcher, number int) { i.allWatchers[number] = w }
func (i *indexedWatchers) deleteWatcher(number int)               { delete(i.allWatchers, number) }

type Cacher struct {
	sync.RWMutex

	incoming   chan watchCacheEvent
	watcherIdx int
	watchers   indexedWatchers
	stopCh     chan struct{}
}

func NewCacher() *Cacher {
	c := &Cacher{
		incoming: make(chan watchCacheEvent, 100),
		watchers: indexedWatchers{allWatchers: map[int]*cacheWatcher{}},
		stopCh:   make(chan struct{}),
	}
	go c.dispatchEvents()
	return c
}

// Watch implements storage.Interface.
func (c *Cacher) Watch(key string) (Interface, error) {
	c.Lock()
	defer c.Unlock()
	forget := forgetWatcher(c, c.watcherIdx)
	watcher := newCacheWatcher(1, forget)
	c.watchers.addWatcher(watcher, c.watcherIdx)
	c.watcherIdx++
	return watcher, nil
}

func (c *Cacher) processEvent(event watchCacheEvent) {
	c.incoming <- event
}

func (c *Cacher) dispatchEvents() {
	for {
		select {
		case event, ok := <-c.incoming:
			if !ok {
				return
			}
			c.dispatchEvent(&event)
		case <-c.stopCh:
			return
		}
	}
}

func (c *Cacher) dispatchEvent(event *watchCacheEvent) {
	c.Lock()
	defer c.Unlock()
	for _, watcher := range c.watchers.allWatchers {
		watcher.add(event)
	}
}

func forgetWatcher(c *Cacher, index int) func() {
	return func() {
		c.Lock() // DEADLOCK HERE
		defer c.Unlock()
		// It's possible that the watcher is already not in the structure
		// (e.g. in case of simultaneous Stop() and terminateAllWatchers().
		c.watchers.deleteWatcher(index)
	}
}

func TestCacherStopSlowWatcher(t *testing.T) {
	c := NewCacher()
	defer close(c.stopCh)

	w, err := c.Watch("/registry/pods/default")
	if err != nil {
		t.Fatal(err)
	}
	for rv := uint64(1); rv <= 4; rv++ {
		c.processEvent(watchCacheEvent{Type: Modified, Object: &Object{Name: "nginx", ResourceVersion: rv}, ResourceVersion: rv})
	}

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // a client that reads one event and then goes away
		defer wg.Done()
		<-w.ResultChan()
		time.Sleep(30 * time.Millisecond)
		w.Stop()
	}()
	wg.Wait()
}
