// Command b70k8squotaworker reproduces the resource quota controller worker
// deadlock fixed by kubernetes/kubernetes#58107 ("Fix quota controller
// worker deadlock", pkg/controller/resourcequota).
//
// Each quota worker took rq.workerLock.RLock and only then blocked in
// queue.Get, a workqueue whose Get waits on a sync.Cond while the queue is
// empty, so an idle worker sleeps in cond.Wait holding the read lock. Sync,
// which rebuilds the quota monitors when discovery changes, calls
// workerLock.Lock and waits for that reader. From then on every new RLock
// queues behind the pending writer. In this model the replenishment path
// that would put work into the queue (replenishQuota, reached from the
// quota monitor's event handler) also reads the controller's registry under
// workerLock.RLock; upstream the stall ends only when an informer event
// happens to arrive, and the read lock on the producer side makes it
// permanent here. The worker waits in cond.Wait for an item, Sync waits in
// Lock for the worker, and the replenisher waits in RLock behind Sync.
//
// The upstream fix pops the key from the queue first and takes the read
// lock only while the key is being processed.
//
// This is the fixed twin: workFunc calls queue.Get before workerLock.RLock.
package main

import (
	"fmt"
	"sync"
	"time"
)

type Type struct {
	queue        []string
	dirty        map[string]bool
	processing   map[string]bool
	cond         *sync.Cond
	shuttingDown bool
}

func NewQueue() *Type {
	return &Type{dirty: map[string]bool{}, processing: map[string]bool{},
		cond: sync.NewCond(&sync.Mutex{})}
}

func (q *Type) Add(item string) {
	q.cond.L.Lock()
	defer q.cond.L.Unlock()
	if q.shuttingDown || q.dirty[item] {
		return
	}
	q.dirty[item] = true
	if q.processing[item] {
		return
	}
	q.queue = append(q.queue, item)
	q.cond.Signal()
}

func (q *Type) Get() (item string, shutdown bool) {
	q.cond.L.Lock()
	defer q.cond.L.Unlock()
	for len(q.queue) == 0 && !q.shuttingDown {
		q.cond.Wait()
	}
	if len(q.queue) == 0 {
		return "", true
	}
	item, q.queue = q.queue[0], q.queue[1:]
	q.processing[item] = true
	delete(q.dirty, item)
	return item, false
}

func (q *Type) Done(item string) {
	q.cond.L.Lock()
	defer q.cond.L.Unlock()
	delete(q.processing, item)
	if q.dirty[item] {
		q.queue = append(q.queue, item)
		q.cond.Signal()
	}
}

func (q *Type) ShutDown() {
	q.cond.L.Lock()
	defer q.cond.L.Unlock()
	q.shuttingDown = true
	q.cond.Broadcast()
}

type Registry struct {
	evaluators map[string]bool
}

type Controller struct {
	queue       *Type
	registry    *Registry
	workerLock  sync.RWMutex
	syncHandler func(key string) error
	synced      chan string
}

func (rq *Controller) syncResourceQuotaFromKey(key string) error {
	if !rq.registry.evaluators["pods"] {
		return fmt.Errorf("no evaluator for pods while syncing %s", key)
	}
	rq.synced <- key
	return nil
}

func (rq *Controller) worker(queue *Type) func() {
	workFunc := func() bool {
		key, quit := queue.Get()
		if quit {
			return true
		}
		defer queue.Done(key)
		rq.workerLock.RLock()
		defer rq.workerLock.RUnlock()
		if err := rq.syncHandler(key); err != nil {
			fmt.Println("sync failed:", err)
		}
		return false
	}
	return func() {
		for {
			if quit := workFunc(); quit {
				return
			}
		}
	}
}

func (rq *Controller) replenishQuota(groupResource, namespace string) {
	rq.workerLock.RLock()
	defer rq.workerLock.RUnlock()
	if !rq.registry.evaluators[groupResource] {
		return
	}
	rq.queue.Add(namespace + "/compute-quota")
}

func (rq *Controller) resyncMonitors(resources []string) {
	reg := &Registry{evaluators: map[string]bool{}}
	for _, r := range resources {
		reg.evaluators[r] = true
	}
	rq.registry = reg
}

func (rq *Controller) Sync(discover func() []string) {
	newResources := discover()
	rq.workerLock.Lock()
	defer rq.workerLock.Unlock()
	rq.resyncMonitors(newResources)
}

func main() {
	rq := &Controller{queue: NewQueue(), synced: make(chan string, 1),
		registry: &Registry{evaluators: map[string]bool{"pods": true}}}
	rq.syncHandler = rq.syncResourceQuotaFromKey

	workerDone := make(chan struct{})
	go func() {
		defer close(workerDone)
		rq.worker(rq.queue)()
	}()
	time.Sleep(50 * time.Millisecond)

	go func() {
		time.Sleep(50 * time.Millisecond)
		rq.replenishQuota("pods", "team-a")
	}()
	rq.Sync(func() []string { return []string{"pods", "services", "persistentvolumeclaims"} })

	fmt.Println("synced", <-rq.synced)
	rq.queue.ShutDown()
	<-workerDone
}
