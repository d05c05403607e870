// Project: kubernetes/kubernetes (pkg/controller/resourcequota/resource_quota_controller.go,
// pkg/controller/resourcequota/resource_quota_monitor.go, client-go util/workqueue)
// Issue: kubernetes/kubernetes#58107 "Fix quota controller worker deadlock"
// (cherry-picked to release-1.9 as #58158)
//
// Bug: the resource quota controller pauses its workers while Sync() swaps
// the quota monitors after a discovery change: workers hold workerLock for
// reading while they work, Sync takes it for writing. But worker() took the
// read lock (line 381) *before* queue.Get(), so an idle worker sits in Get's
// sync.Cond.Wait (line 98) holding workerLock.RLock until an item arrives.
// With one idle worker per queue (queue and missingUsageQueue), Sync's
// rq.workerLock.Lock() (line 453) waits for those readers forever: the work
// that would wake them comes from the replenishment events of the monitors
// that Sync itself only starts (resyncMonitors -> StartMonitors) after it has
// the write lock, and the periodic full resync only feeds `queue`, never
// `missingUsageQueue`. Every later RLock queues behind the pending writer, so
// quota is never recalculated again. The fix takes the read lock only after
// an item has been popped from the queue.
package main

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"time"
)

// ---- k8s.io/client-go/util/workqueue (trimmed) ----

type Interface interface {
	Add(item interface{})
	Len() int
	Get() (item interface{}, shutdown bool)
	Done(item interface{})
	ShutDown()
}

type RateLimitingInterface interface {
	Interface
	AddRateLimited(item interface{})
	Forget(item interface{})
}

type t interface{}
type empty struct{}
type set map[t]empty

func (s set) has(item t) bool { _, exists := s[item]; return exists }
func (s set) insert(item t)   { s[item] = empty{} }
func (s set) delete(item t)   { delete(s, item) }

// Type is a work queue (see the package comment).
type Type struct {
	queue        []t
	dirty        set
	processing   set
	cond         *sync.Cond
	shuttingDown bool
}

func NewNamed(name string) *Type {
	return &Type{
		dirty:      set{},
		processing: set{},
		cond:       sync.NewCond(&sync.Mutex{}),
	}
}

func (q *Type) Add(item interface{}) {
	q.cond.L.Lock()
	defer q.cond.L.Unlock()
	if q.shuttingDown {
		return
	}
	if q.dirty.has(item) {
		return
	}
	q.dirty.insert(item)
	if q.processing.has(item) {
		return
	}
	q.queue = append(q.queue, item)
	q.cond.Signal()
}

func (q *Type) Len() int {
	q.cond.L.Lock()
	defer q.cond.L.Unlock()
	return len(q.queue)
}

func (q *Type) Get() (item interface{}, shutdown bool) {
	q.cond.L.Lock()
	defer q.cond.L.Unlock()
	for len(q.queue) == 0 && !q.shuttingDown {
		q.cond.Wait()
	}
	if len(q.queue) == 0 {
		// We must be shutting down.
		return nil, true
	}
	item, q.queue = q.queue[0], q.queue[1:]
	q.processing.insert(item)
	q.dirty.delete(item)
	return item, false
}

func (q *Type) Done(item interface{}) {
	q.cond.L.Lock()
	defer q.cond.L.Unlock()
	q.processing.delete(item)
	if q.dirty.has(item) {
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

type rateLimitingType struct {
	Interface
	failures map[interface{}]int
	mu       sync.Mutex
}

func NewNamedRateLimitingQueue(name string) RateLimitingInterface {
	return &rateLimitingType{Interface: NewNamed(name), failures: map[interface{}]int{}}
}

// AddRateLimited re-adds the item; the exponential back-off delay is elided.
func (q *rateLimitingType) AddRateLimited(item interface{}) {
	q.mu.Lock()
	q.failures[item]++
	q.mu.Unlock()
	q.Add(item)
}

func (q *rateLimitingType) Forget(item interface{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.failures, item)
}

// ---- k8s.io/apimachinery/pkg/util/wait (trimmed) ----

func Until(f func(), period time.Duration, stopCh <-chan struct{}) {
	for {
		select {
		case <-stopCh:
			return
		default:
		}
		f()
		select {
		case <-stopCh:
			return
		case <-time.After(period):
		}
	}
}

// WaitForCacheSync polls the synced funcs (client-go polls every 100ms).
func WaitForCacheSync(controllerName string, stopCh <-chan struct{}, cacheSyncs ...func() bool) bool {
	for {
		synced := true
		for _, s := range cacheSyncs {
			if !s() {
				synced = false
			}
		}
		if synced {
			return true
		}
		select {
		case <-stopCh:
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// ---- pkg/controller/resourcequota ----

type GroupVersionResource struct{ Group, Version, Resource string }

type NamespacedResourcesFunc func() ([]GroupVersionResource, error)

type ReplenishmentFunc func(groupResource string, namespace string)

type event struct {
	eventType string
	namespace string
	gvr       GroupVersionResource
}

// fakeInformer stands in for the shared informer a monitor runs for one resource.
type fakeInformer struct {
	gvr     GroupVersionResource
	objects []string // namespaces of the existing objects
	handler func(*event)
	synced  bool
	mu      sync.Mutex
}

func (i *fakeInformer) Run(stopCh <-chan struct{}) {
	for _, ns := range i.objects {
		i.handler(&event{eventType: "add", namespace: ns, gvr: i.gvr})
	}
	i.mu.Lock()
	i.synced = true
	i.mu.Unlock()
	<-stopCh
}

func (i *fakeInformer) HasSynced() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.synced
}

type monitor struct {
	controller *fakeInformer
	stopCh     chan struct{}
}

func (m *monitor) Run() {
	m.controller.Run(m.stopCh)
}

type monitors map[GroupVersionResource]*monitor

type QuotaMonitor struct {
	// each monitor list/watches a resource and determines if we should replenish quota
	monitors    monitors
	monitorLock sync.Mutex
	// stopCh drives shutdown. If it is nil, it indicates that Run() has not been
	// called yet. If it is non-nil, then when closed it indicates everything
	// should shut down.
	stopCh <-chan struct{}
	// running tracks whether Run() has been called.
	running bool
	// monitors are the producer of the resourceChanges queue
	resourceChanges RateLimitingInterface
	// replenishmentFunc is invoked when a change is observed
	replenishmentFunc ReplenishmentFunc
	// objects existing in the cluster, per resource (stands in for the informer factory)
	cluster map[GroupVersionResource][]string
}

func (qm *QuotaMonitor) controllerFor(resource GroupVersionResource) *fakeInformer {
	return &fakeInformer{
		gvr:     resource,
		objects: qm.cluster[resource],
		handler: func(e *event) { qm.resourceChanges.Add(e) },
	}
}

// SyncMonitors rebuilds the monitor set according to the supplied resources.
func (qm *QuotaMonitor) SyncMonitors(resources map[GroupVersionResource]struct{}) error {
	qm.monitorLock.Lock()
	defer qm.monitorLock.Unlock()

	toRemove := qm.monitors
	if toRemove == nil {
		toRemove = monitors{}
	}
	current := monitors{}
	for resource := range resources {
		if m, ok := toRemove[resource]; ok {
			current[resource] = m
			delete(toRemove, resource)
			continue
		}
		current[resource] = &monitor{controller: qm.controllerFor(resource)}
	}
	for _, m := range toRemove {
		if m.stopCh != nil {
			close(m.stopCh)
		}
	}
	qm.monitors = current
	return nil
}

// StartMonitors ensures the current set of monitors are running.
func (qm *QuotaMonitor) StartMonitors() {
	qm.monitorLock.Lock()
	defer qm.monitorLock.Unlock()

	if !qm.running {
		return
	}
	for _, monitor := range qm.monitors {
		if monitor.stopCh == nil {
			monitor.stopCh = make(chan struct{})
			go monitor.Run()
		}
	}
}

// IsSynced returns true if any monitors exist AND all those monitors'
// controllers HasSynced functions return true.
func (qm *QuotaMonitor) IsSynced() bool {
	qm.monitorLock.Lock()
	defer qm.monitorLock.Unlock()

	if len(qm.monitors) == 0 {
		return false
	}
	for _, monitor := range qm.monitors {
		if !monitor.controller.HasSynced() {
			return false
		}
	}
	return true
}

// Run sets the stop channel and starts monitor execution until stopCh is
// closed.
func (qm *QuotaMonitor) Run(stopCh <-chan struct{}) {
	// Set up the stop channel.
	qm.monitorLock.Lock()
	qm.stopCh = stopCh
	qm.running = true
	qm.monitorLock.Unlock()

	// Start monitors and begin change processing until the stop channel is
	// closed.
	qm.StartMonitors()
	Until(qm.runProcessResourceChanges, 1*time.Second, stopCh)
}

func (qm *QuotaMonitor) runProcessResourceChanges() {
	for qm.processResourceChanges() {
	}
}

// Dequeueing an event from resourceChanges to process
func (qm *QuotaMonitor) processResourceChanges() bool {
	item, quit := qm.resourceChanges.Get()
	if quit {
		return false
	}
	defer qm.resourceChanges.Done(item)
	event := item.(*event)
	qm.replenishmentFunc(event.gvr.Resource, event.namespace)
	return true
}

// ResourceQuotaController is responsible for tracking quota usage status in the system
type ResourceQuotaController struct {
	// quotas in the cluster (stands in for rqLister): namespace -> quota names
	rqLister map[string][]string
	// ResourceQuota objects that need to be synchronized
	queue RateLimitingInterface
	// missingUsageQueue holds objects that are missing the initial usage information
	missingUsageQueue RateLimitingInterface
	// To allow injection of syncUsage for testing.
	syncHandler  func(key string) error
	quotaMonitor *QuotaMonitor
	// controls the workers that process quotas
	// this lock is acquired to control write access to the monitors and ensures that all
	// monitors are synced before the controller can process quotas.
	workerLock sync.RWMutex
}

func (rq *ResourceQuotaController) enqueueResourceQuota(key string) {
	rq.queue.Add(key)
}

// worker runs a worker thread that just dequeues items, processes them, and marks them done.
func (rq *ResourceQuotaController) worker(queue RateLimitingInterface) func() {
	workFunc := func() bool {
		rq.workerLock.RLock()
		defer rq.workerLock.RUnlock()
		key, quit := queue.Get()
		if quit {
			return true
		}
		defer queue.Done(key)
		err := rq.syncHandler(key.(string))
		if err == nil {
			queue.Forget(key)
			return false
		}
		queue.AddRateLimited(key)
		return false
	}

	return func() {
		for {
			if quit := workFunc(); quit {
				fmt.Println("resource quota controller worker shutting down")
				return
			}
		}
	}
}

// Run begins quota controller using the specified number of workers
func (rq *ResourceQuotaController) Run(workers int, stopCh <-chan struct{}) {
	defer rq.queue.ShutDown()
	defer rq.missingUsageQueue.ShutDown()

	if rq.quotaMonitor != nil {
		go rq.quotaMonitor.Run(stopCh)
	}

	// the workers that chug through the quota calculation backlog
	for i := 0; i < workers; i++ {
		go Until(rq.worker(rq.queue), time.Second, stopCh)
		go Until(rq.worker(rq.missingUsageQueue), time.Second, stopCh)
	}
	<-stopCh
}

// replenishQuota is a replenishment function invoked by a controller to notify that a quota should be recalculated
func (rq *ResourceQuotaController) replenishQuota(groupResource string, namespace string) {
	// check if this namespace even has a quota...
	for _, name := range rq.rqLister[namespace] {
		rq.enqueueResourceQuota(namespace + "/" + name)
	}
}

// Sync periodically resyncs the controller when new resources are observed from discovery.
func (rq *ResourceQuotaController) Sync(discoveryFunc NamespacedResourcesFunc, period time.Duration, stopCh <-chan struct{}) {
	// Something has changed, so track the new state and perform a sync.
	oldResources := make(map[GroupVersionResource]struct{})
	Until(func() {
		// Get the current resource list from discovery.
		newResources, err := GetQuotableResources(discoveryFunc)
		if err != nil {
			return
		}

		// Decide whether discovery has reported a change.
		if reflect.DeepEqual(oldResources, newResources) {
			return
		}

		// Something has changed, so track the new state and perform a sync.
		oldResources = newResources

		// Ensure workers are paused to avoid processing events before informers
		// have resynced.
		rq.workerLock.Lock()
		defer rq.workerLock.Unlock()

		// Perform the monitor resync and wait for controllers to report cache sync.
		if err := rq.resyncMonitors(newResources); err != nil {
			fmt.Printf("failed to sync resource monitors: %v\n", err)
			return
		}
		if rq.quotaMonitor != nil && !WaitForCacheSync("resource quota", stopCh, rq.quotaMonitor.IsSynced) {
			fmt.Println("timed out waiting for quota monitor sync")
		}
	}, period, stopCh)
}

// resyncMonitors starts or stops quota monitors as needed to ensure that all
// (and only) those resources present in the map are monitored.
func (rq *ResourceQuotaController) resyncMonitors(resources map[GroupVersionResource]struct{}) error {
	if rq.quotaMonitor == nil {
		return nil
	}

	if err := rq.quotaMonitor.SyncMonitors(resources); err != nil {
		return err
	}
	rq.quotaMonitor.StartMonitors()
	return nil
}

// GetQuotableResources returns all resources that the quota system should recognize.
func GetQuotableResources(discoveryFunc NamespacedResourcesFunc) (map[GroupVersionResource]struct{}, error) {
	possibleResources, err := discoveryFunc()
	if err != nil {
		return nil, err
	}
	result := map[GroupVersionResource]struct{}{}
	for _, r := range possibleResources {
		result[r] = struct{}{}
	}
	return result, nil
}

func NewResourceQuotaController(rqs map[string][]string, cluster map[GroupVersionResource][]string) *ResourceQuotaController {
	rq := &ResourceQuotaController{
		rqLister:          rqs,
		queue:             NewNamedRateLimitingQueue("resourcequota_primary"),
		missingUsageQueue: NewNamedRateLimitingQueue("resourcequota_priority"),
	}
	rq.quotaMonitor = &QuotaMonitor{
		resourceChanges:   NewNamedRateLimitingQueue("resource_quota_controller_resource_changes"),
		replenishmentFunc: rq.replenishQuota,
		cluster:           cluster,
	}
	return rq
}

// waitForIdle waits until n goroutines running fn are parked in state.
func waitForIdle(fn, state string, n int) {
	buf := make([]byte, 1<<20)
	for {
		m := runtime.Stack(buf, true)
		cnt := 0
		for _, g := range strings.Split(string(buf[:m]), "\n\n") {
			header, _, _ := strings.Cut(g, "\n")
			if strings.Contains(g, fn) && strings.Contains(header, "["+state) {
				cnt++
			}
		}
		if cnt >= n {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func main() {
	pods := GroupVersionResource{Version: "v1", Resource: "pods"}
	services := GroupVersionResource{Version: "v1", Resource: "services"}

	rq := NewResourceQuotaController(
		map[string][]string{"team-a": {"compute-quota"}},
		map[GroupVersionResource][]string{pods: {"team-a", "team-a"}, services: {"team-a"}},
	)
	recalculated := make(chan string, 16)
	rq.syncHandler = func(key string) error {
		// syncResourceQuotaFromKey: recompute usage and update status.
		recalculated <- key
		return nil
	}

	stopCh := make(chan struct{})
	runDone := make(chan struct{})
	go func() {
		rq.Run(1, stopCh)
		close(runDone)
	}()

	// Both workers are idle, waiting for quotas to process.
	waitForIdle("ResourceQuotaController).worker", "sync.Cond.Wait", 2)

	// Discovery reports the quotable resources; Sync starts the monitors,
	// whose replenishment events make the quota controller recalculate.
	discovery := func() ([]GroupVersionResource, error) {
		return []GroupVersionResource{pods, services}, nil
	}
	go rq.Sync(discovery, 30*time.Second, stopCh)

	fmt.Println("quota recalculated:", <-recalculated)
	close(stopCh)
	<-runDone
}
