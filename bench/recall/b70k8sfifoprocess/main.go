// Command b70k8sfifoprocess reproduces a self-deadlock modelled on
// Kubernetes client-go's informer machinery (tools/cache controller.go and
// delta_fifo.go), no specific upstream bug.
//
// The controller is built from a Config literal whose Process field has
// the named func type ProcessFunc. processLoop hands that function to
// DeltaFIFO.Pop, and Pop calls it while holding the queue lock f.lock, as
// client-go documents ("process function is called under lock"). The
// Process function built in newInformer dispatches the deltas to a
// resource event handler; the endpoints tracker's OnAdd wants to know
// whether the initial list has been delivered and calls the informer's
// HasSynced, which goes to Controller.HasSynced and then to
// DeltaFIFO.HasSynced, and that takes f.lock again. The single goroutine
// blocks on the lock it holds inside Pop.
//
// The fix makes Pop remove the item under the lock, release f.lock, run
// the process function, and re-take the lock only to requeue on error.
package main

import (
	"errors"
	"fmt"
	"sync"
)

type Delta struct {
	Type   string
	Object interface{}
}

type Deltas []Delta

// ProcessFunc processes a single object popped from the queue.
type ProcessFunc func(obj interface{}) error

var ErrFIFOClosed = errors.New("DeltaFIFO: manipulating with closed queue")

type DeltaFIFO struct {
	lock                   sync.RWMutex
	items                  map[string]Deltas
	queue                  []string
	populated              bool
	initialPopulationCount int
	closed                 bool
}

func NewDeltaFIFO() *DeltaFIFO {
	return &DeltaFIFO{items: map[string]Deltas{}}
}

func (f *DeltaFIFO) Replace(keys []string, objs []interface{}) {
	f.lock.Lock()
	defer f.lock.Unlock()
	for i, k := range keys {
		if _, ok := f.items[k]; !ok {
			f.queue = append(f.queue, k)
		}
		f.items[k] = append(f.items[k], Delta{Type: "Replaced", Object: objs[i]})
	}
	if !f.populated {
		f.populated = true
		f.initialPopulationCount = len(f.queue)
	}
}

func (f *DeltaFIFO) Close() {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.closed = true
}

func (f *DeltaFIFO) HasSynced() bool {
	f.lock.Lock()
	defer f.lock.Unlock()
	return f.hasSyncedLocked()
}

func (f *DeltaFIFO) hasSyncedLocked() bool {
	return f.populated && f.initialPopulationCount == 0
}

func (f *DeltaFIFO) Pop(process ProcessFunc) (interface{}, error) {
	f.lock.Lock()
	defer f.lock.Unlock()
	if len(f.queue) == 0 {
		return nil, ErrFIFOClosed
	}
	id := f.queue[0]
	f.queue = f.queue[1:]
	if f.initialPopulationCount > 0 {
		f.initialPopulationCount--
	}
	item := f.items[id]
	delete(f.items, id)
	err := process(item)
	if err != nil {
		f.queue = append(f.queue, id)
		f.items[id] = item
	}
	return item, err
}

type Config struct {
	Queue        *DeltaFIFO
	Process      ProcessFunc
	RetryOnError bool
}

type Controller struct {
	config Config
}

func (c *Controller) HasSynced() bool { return c.config.Queue.HasSynced() }

func (c *Controller) processLoop() {
	for {
		_, err := c.config.Queue.Pop(c.config.Process)
		if errors.Is(err, ErrFIFOClosed) {
			return
		}
		if err != nil && !c.config.RetryOnError {
			fmt.Println("process:", err)
		}
	}
}

type ResourceEventHandler interface {
	OnAdd(obj interface{})
	OnUpdate(oldObj, newObj interface{})
}

type informer struct {
	controller *Controller
	indexer    map[string]interface{}
}

func (i *informer) HasSynced() bool { return i.controller.HasSynced() }

func newInformer(h ResourceEventHandler) *informer {
	inf := &informer{indexer: map[string]interface{}{}}
	inf.controller = &Controller{config: Config{
		Queue:        NewDeltaFIFO(),
		RetryOnError: false,
		Process: func(obj interface{}) error {
			for _, d := range obj.(Deltas) {
				key := d.Object.(string)
				if old, ok := inf.indexer[key]; ok {
					inf.indexer[key] = d.Object
					h.OnUpdate(old, d.Object)
					continue
				}
				inf.indexer[key] = d.Object
				h.OnAdd(d.Object)
			}
			return nil
		},
	}}
	return inf
}

type endpointsTracker struct {
	informer       *informer
	initialAdds    int
	afterSyncAdds  int
	updatesSeenFor []string
}

func (t *endpointsTracker) OnAdd(obj interface{}) {
	if t.informer.HasSynced() {
		t.afterSyncAdds++
		return
	}
	t.initialAdds++
}

func (t *endpointsTracker) OnUpdate(oldObj, newObj interface{}) {
	t.updatesSeenFor = append(t.updatesSeenFor, newObj.(string))
}

func main() {
	tracker := &endpointsTracker{}
	inf := newInformer(tracker)
	tracker.informer = inf
	q := inf.controller.config.Queue
	q.Replace([]string{"default/kubernetes", "kube-system/kube-dns"},
		[]interface{}{"default/kubernetes", "kube-system/kube-dns"})
	q.Close()
	inf.controller.processLoop()
	fmt.Printf("initial=%d afterSync=%d synced=%v\n",
		tracker.initialAdds, tracker.afterSyncAdds, inf.HasSynced())
}
