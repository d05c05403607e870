// Package main models client-go's shared informer (tools/cache/shared_informer.go
// and controller.go): deltas are applied to the indexer and the event handler
// is notified while the indexer lock is held. The handler defaults to the
// informer itself, whose OnAdd/OnUpdate/OnDelete only bump atomic counters and
// never take the lock. A controller may install its own handler, which only
// enqueues keys into a workqueue guarded by a separate lock (order:
// indexer.mu -> queue.mu, never reversed).
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

type object struct {
	namespace, name string
	resourceVersion int
}

func (o object) key() string { return o.namespace + "/" + o.name }

type eventHandler interface {
	OnAdd(obj object)
	OnUpdate(old, cur object)
	OnDelete(obj object)
}

type informer struct {
	mu      sync.Mutex
	items   map[string]object
	handler eventHandler

	adds, updates, deletes atomic.Int64
}

func newInformer() *informer {
	inf := &informer{items: make(map[string]object)}
	inf.handler = inf
	return inf
}

// Default handler: atomics only, must not touch inf.mu.
func (inf *informer) OnAdd(object)            { inf.adds.Add(1) }
func (inf *informer) OnUpdate(object, object) { inf.updates.Add(1) }
func (inf *informer) OnDelete(object)         { inf.deletes.Add(1) }

func (inf *informer) AddEventHandler(h eventHandler) {
	inf.mu.Lock()
	inf.handler = h
	inf.mu.Unlock()
}

func (inf *informer) HandleDelta(o object, deleted bool) {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	k := o.key()
	old, exists := inf.items[k]
	switch {
	case deleted && exists:
		delete(inf.items, k)
		inf.handler.OnDelete(old)
	case deleted:
	case exists:
		inf.items[k] = o
		inf.handler.OnUpdate(old, o)
	default:
		inf.items[k] = o
		inf.handler.OnAdd(o)
	}
}

func (inf *informer) List() []object {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	out := make([]object, 0, len(inf.items))
	for _, o := range inf.items {
		out = append(out, o)
	}
	return out
}

// workqueue is a tiny deduplicating queue, like k8s.io/client-go/util/workqueue.
type workqueue struct {
	mu    sync.Mutex
	dirty map[string]bool
	order []string
}

func (q *workqueue) Add(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.dirty[key] {
		return
	}
	q.dirty[key] = true
	q.order = append(q.order, key)
}

func (q *workqueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.order)
}

type controllerHandler struct{ q *workqueue }

func (h controllerHandler) OnAdd(o object)         { h.q.Add(o.key()) }
func (h controllerHandler) OnUpdate(_, cur object) { h.q.Add(cur.key()) }
func (h controllerHandler) OnDelete(o object)      { h.q.Add(o.key()) }

func feed(inf *informer, ns string, wg *sync.WaitGroup) {
	defer wg.Done()
	for i := 0; i < 50; i++ {
		o := object{namespace: ns, name: fmt.Sprintf("pod-%d", i%10), resourceVersion: i}
		inf.HandleDelta(o, i%7 == 6)
	}
}

func main() {
	inf := newInformer()
	var wg sync.WaitGroup
	for _, ns := range []string{"default", "kube-system", "monitoring"} {
		wg.Add(1)
		go feed(inf, ns, &wg)
	}
	wg.Wait()
	fmt.Printf("self handler: adds=%d updates=%d deletes=%d cached=%d\n",
		inf.adds.Load(), inf.updates.Load(), inf.deletes.Load(), len(inf.List()))

	q := &workqueue{dirty: make(map[string]bool)}
	inf.AddEventHandler(controllerHandler{q: q})
	for _, ns := range []string{"default", "ingress", "apps"} {
		wg.Add(1)
		go feed(inf, ns, &wg)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 100; i++ {
			_ = inf.List()
		}
	}()
	wg.Wait()
	fmt.Println("workqueue keys:", q.Len())
	if q.Len() != 30 {
		panic("expected 30 distinct keys")
	}
}
