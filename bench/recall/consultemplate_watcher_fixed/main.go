// Project: hashicorp consul-template (watch/watcher.go, watch/view.go)
// Bug: Watcher.Stop held the watcher mutex while stopping every view and waiting for each view's
// poll goroutine to exit. A poll goroutine that had just returned from a blocking query reports the
// update through the watcher callback (markUpdated), which needs the watcher mutex, so it never
// finishes and Stop waits on the WaitGroup forever (consul-template hangs on SIGTERM/reload).
// Upstream fix (applied here): Stop takes the views out of depViewMap under the lock and stops them after unlocking; modelled, issue number not recalled.
package main

import (
	"fmt"
	"sync"
	"time"
)

type QueryOptions struct {
	WaitIndex uint64
	WaitTime  time.Duration
}

type ResponseMetadata struct {
	LastIndex uint64
}

type Dependency interface {
	Fetch(opts *QueryOptions) (any, *ResponseMetadata, error)
	String() string
	Stop()
}

type View struct {
	dependency   Dependency
	dataLock     sync.RWMutex
	data         any
	receivedData bool
	lastIndex    uint64
	stopCh       chan struct{}
	wg           sync.WaitGroup
	onUpdate     func(*View)
}

func NewView(d Dependency, onUpdate func(*View)) *View {
	return &View{dependency: d, stopCh: make(chan struct{}), onUpdate: onUpdate}
}

func (v *View) poll() {
	defer v.wg.Done()
	for {
		data, rm, err := v.dependency.Fetch(&QueryOptions{WaitIndex: v.lastIndex, WaitTime: time.Minute})
		if err == nil {
			v.dataLock.Lock()
			v.data, v.receivedData, v.lastIndex = data, true, rm.LastIndex
			v.dataLock.Unlock()
			v.onUpdate(v)
		}
		select {
		case <-v.stopCh:
			return
		default:
		}
	}
}

func (v *View) stop() {
	v.dependency.Stop()
	close(v.stopCh)
	v.wg.Wait()
}

type Watcher struct {
	sync.Mutex
	depViewMap  map[string]*View
	lastUpdated map[string]time.Time
}

func NewWatcher() *Watcher {
	return &Watcher{depViewMap: make(map[string]*View), lastUpdated: make(map[string]time.Time)}
}

func (w *Watcher) Add(d Dependency) bool {
	w.Lock()
	defer w.Unlock()
	if _, ok := w.depViewMap[d.String()]; ok {
		return false
	}
	v := NewView(d, w.markUpdated)
	w.depViewMap[d.String()] = v
	v.wg.Add(1)
	go v.poll()
	return true
}

func (w *Watcher) markUpdated(v *View) {
	w.Lock()
	defer w.Unlock()
	w.lastUpdated[v.dependency.String()] = time.Now()
}

func (w *Watcher) Stop() {
	w.Lock()
	views := make([]*View, 0, len(w.depViewMap))
	for name, view := range w.depViewMap {
		if view != nil {
			views = append(views, view)
		}
		delete(w.depViewMap, name)
	}
	w.Unlock()

	// Poll goroutines may still call markUpdated; stop them without the lock.
	for _, view := range views {
		view.stop()
	}
}

// KVGetQuery performs a blocking query against consul's KV store.
type KVGetQuery struct {
	key     string
	stopped chan struct{}
	once    sync.Once
}

func (d *KVGetQuery) Fetch(opts *QueryOptions) (any, *ResponseMetadata, error) {
	time.Sleep(30 * time.Millisecond) // long-poll returning with a new index
	return "value-of-" + d.key, &ResponseMetadata{LastIndex: opts.WaitIndex + 1}, nil
}

func (d *KVGetQuery) String() string { return "kv.block(" + d.key + ")" }

func (d *KVGetQuery) Stop() { d.once.Do(func() { close(d.stopped) }) }

func main() {
	w := NewWatcher()
	w.Add(&KVGetQuery{key: "service/nginx/config", stopped: make(chan struct{})})
	w.Add(&KVGetQuery{key: "service/nginx/upstreams", stopped: make(chan struct{})})

	time.Sleep(10 * time.Millisecond)
	// Runner.Stop on SIGINT
	w.Stop()
	fmt.Println("watcher stopped")
}
