// Project: istio (pkg/kube/krt: collection.go manyCollection, static.go, fetch.go, handlers), used by istiod's ambient index, 1.24 development, November 2024 (fixed by PR #53994 "krt: move event processing to queue"; approximate reconstruction).
// Bug: krt event handlers ran synchronously, and a collection distributed events to its handlers while holding its handler-set lock (and its recompute lock). When a downstream recomputation triggered by an event of collection 1 Fetches collection 1 for the first time, registering the new dependency needs collection 1's handler lock, which is already held further up the same call stack, so istiod's event goroutine deadlocks on itself. The fix moves dependency and input events onto a per-collection queue so handlers never run under another collection's lock.
package main

import (
	"fmt"
	"sync"
)

type EventType int

const EventUpdate EventType = 1

type Event[T any] struct {
	New   *T
	Event EventType
}

type Collection[T any] interface {
	List() []T
	RegisterBatch(f func(o []Event[T], initialSync bool), runExistingState bool)
	uid() string
}

// handlers is the set of event handlers of one collection.
type handlers[O any] struct {
	mu sync.RWMutex
	h  []func(o []Event[O], initialSync bool)
}

func (o *handlers[O]) Insert(f func(o []Event[O], initialSync bool)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.h = append(o.h, f)
}

func (o *handlers[O]) Distribute(events []Event[O], initialSync bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	for _, h := range o.h {
		h(events, initialSync)
	}
}

// staticCollection is an input collection (here: namespaces from the informer).
type staticCollection[T any] struct {
	name          string
	mu            sync.RWMutex
	vals          map[string]T
	getKey        func(T) string
	eventHandlers *handlers[T]
}

func (s *staticCollection[T]) uid() string { return s.name }
func (s *staticCollection[T]) List() []T {
	s.mu.RLock()
	defer s.mu.RUnlock()
	res := make([]T, 0, len(s.vals))
	for _, v := range s.vals {
		res = append(res, v)
	}
	return res
}
func (s *staticCollection[T]) RegisterBatch(f func(o []Event[T], initialSync bool), runExistingState bool) {
	if runExistingState {
		f(nil, true)
	}
	s.eventHandlers.Insert(f)
}
func (s *staticCollection[T]) UpdateObject(obj T) {
	s.mu.Lock()
	s.vals[s.getKey(obj)] = obj
	s.mu.Unlock()
	s.eventHandlers.Distribute([]Event[T]{{New: &obj, Event: EventUpdate}}, false)
}

// HandlerContext is passed to transformations; Fetch records dependencies on it.
type HandlerContext interface {
	registerDependency(id string, register func(f func()))
}

// manyCollection builds a mapping from I->O.
type manyCollection[I, O any] struct {
	name           string
	parent         Collection[I]
	recomputeMu    sync.Mutex
	mu             sync.RWMutex
	outputs        map[string]O
	getKey         func(O) string
	eventHandlers  *handlers[O]
	transformation func(ctx HandlerContext, i I) []O
	// collectionDependencies are the collections we depend on via Fetch.
	collectionDependencies map[string]bool
	queue                  chan func()
}

// pending counts queued events, so main can wait for the queues to drain.
var pending sync.WaitGroup

func (h *manyCollection[I, O]) enqueue(f func()) {
	pending.Add(1)
	h.queue <- func() { defer pending.Done(); f() }
}

func (h *manyCollection[I, O]) runQueue() {
	for f := range h.queue {
		f()
	}
}

func NewManyCollection[I, O any](name string, parent Collection[I], getKey func(O) string, t func(HandlerContext, I) []O) *manyCollection[I, O] {
	h := &manyCollection[I, O]{name: name, parent: parent, outputs: map[string]O{}, getKey: getKey,
		eventHandlers: &handlers[O]{}, transformation: t, collectionDependencies: map[string]bool{}, queue: make(chan func(), 64)}
	go h.runQueue()
	parent.RegisterBatch(func(o []Event[I], initialSync bool) { h.enqueue(h.onPrimaryInputEvent) }, true)
	return h
}

func (h *manyCollection[I, O]) uid() string { return h.name }
func (h *manyCollection[I, O]) List() []O {
	h.mu.RLock()
	defer h.mu.RUnlock()
	res := make([]O, 0, len(h.outputs))
	for _, o := range h.outputs {
		res = append(res, o)
	}
	return res
}
func (h *manyCollection[I, O]) RegisterBatch(f func(o []Event[O], initialSync bool), runExistingState bool) {
	if runExistingState {
		// Block new event processing while the initial state is delivered.
		h.recomputeMu.Lock()
		defer h.recomputeMu.Unlock()
		f(nil, true)
	}
	h.eventHandlers.Insert(f)
}

// onPrimaryInputEvent recomputes all outputs (also used for dependency events).
func (h *manyCollection[I, O]) onPrimaryInputEvent() {
	h.recomputeMu.Lock()
	defer h.recomputeMu.Unlock()
	var events []Event[O]
	for _, i := range h.parent.List() {
		for _, o := range h.transformation(h, i) {
			h.mu.Lock()
			h.outputs[h.getKey(o)] = o
			h.mu.Unlock()
			events = append(events, Event[O]{New: &o, Event: EventUpdate})
		}
	}
	h.eventHandlers.Distribute(events, false)
}

func (h *manyCollection[I, O]) registerDependency(id string, register func(f func())) {
	// For any new collection we depend on, start watching it the first time.
	if !h.collectionDependencies[id] {
		h.collectionDependencies[id] = true
		register(func() { h.enqueue(h.onPrimaryInputEvent) })
	}
}

// Fetch returns the objects of c and records c as a dependency of ctx.
func Fetch[T any](ctx HandlerContext, c Collection[T]) []T {
	ctx.registerDependency(c.uid(), func(f func()) {
		// Skip the existing state for secondary dependencies.
		c.RegisterBatch(func(o []Event[T], initialSync bool) { f() }, false)
	})
	return c.List()
}

type Namespace struct{ Name, UseWaypoint string }
type Service struct{ Name, Namespace string }
type ServiceInfo struct {
	Name, Waypoint        string
	WaypointFromNamespace bool
}
type Pod struct{ Name, Namespace, Service string }
type WorkloadInfo struct{ Name, Waypoint string }

func main() {
	namespaces := &staticCollection[Namespace]{name: "Namespaces", vals: map[string]Namespace{}, getKey: func(n Namespace) string { return n.Name }, eventHandlers: &handlers[Namespace]{}}
	namespaces.UpdateObject(Namespace{Name: "default"})
	svcSrc := &staticCollection[Service]{name: "Services/informer", vals: map[string]Service{}, getKey: func(s Service) string { return s.Name }, eventHandlers: &handlers[Service]{}}
	svcSrc.UpdateObject(Service{Name: "reviews", Namespace: "default"})
	podSrc := &staticCollection[Pod]{name: "Pods/informer", vals: map[string]Pod{}, getKey: func(p Pod) string { return p.Name }, eventHandlers: &handlers[Pod]{}}
	podSrc.UpdateObject(Pod{Name: "reviews-v1-7d4f", Namespace: "default", Service: "reviews"})

	services := NewManyCollection[Service, ServiceInfo]("ServicesInfo", svcSrc, func(s ServiceInfo) string { return s.Name }, func(ctx HandlerContext, s Service) []ServiceInfo {
		for _, ns := range Fetch[Namespace](ctx, namespaces) {
			if ns.Name == s.Namespace && ns.UseWaypoint != "" {
				return []ServiceInfo{{Name: s.Name, Waypoint: ns.UseWaypoint, WaypointFromNamespace: true}}
			}
		}
		return []ServiceInfo{{Name: s.Name}}
	})
	workloads := NewManyCollection[Pod, WorkloadInfo]("WorkloadInfo", podSrc, func(w WorkloadInfo) string { return w.Name }, func(ctx HandlerContext, p Pod) []WorkloadInfo {
		w := WorkloadInfo{Name: p.Name}
		for _, si := range Fetch[ServiceInfo](ctx, services) {
			if si.Name == p.Service && si.WaypointFromNamespace {
				// Inherited waypoint: resolve it through the pod's namespace.
				for _, ns := range Fetch[Namespace](ctx, namespaces) {
					if ns.Name == p.Namespace {
						w.Waypoint = ns.UseWaypoint
					}
				}
			}
		}
		return []WorkloadInfo{w}
	})

	// kubectl label ns default istio.io/use-waypoint=waypoint
	namespaces.UpdateObject(Namespace{Name: "default", UseWaypoint: "waypoint"})
	pending.Wait()
	fmt.Println("workloads:", workloads.List())
}
