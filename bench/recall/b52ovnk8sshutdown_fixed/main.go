// Project: ovn-org/ovn-kubernetes (the OVN CNI for Kubernetes/OpenShift),
// go-controller, early 2025.
// Files/functions: go-controller/pkg/factory/factory.go (WatchFactory.Shutdown,
// NewMasterWatchFactory), go-controller/pkg/factory/handler.go (informer,
// Handler, informer.removeAllHandlers, the tombstone CAS).
// Issue: ovn-org/ovn-kubernetes#4092; fixed by PR ovn-org/ovn-kubernetes#5027
// "factory/handler: avoid deadlock on shutdown."
//
// WatchFactory.Shutdown walks wf.informers, a map keyed by object type, and for
// each informer takes the informer's write lock, defers the unlock and removes
// all of its handlers. Because the unlock is deferred to the end of Shutdown,
// Shutdown ends up holding every informer lock at the same time, taken in map
// iteration order, and Go randomizes that order on every range. When Shutdown
// runs from two goroutines at once (the PR's scenario; here two teardown
// paths of ovnkube stop the same watch factory), one can lock the pod informer
// first and the other the namespace informer first; each then waits for the
// lock the other one holds. The fix releases each informer's lock before
// moving on to the next (the body moved into a function with its own defer).
// The stopOnce guard and the queue-drain delay are the model's. The program
// retries until the two map walks start at different informers, which with six
// informers happens within a few attempts.
package main

import (
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
)

const (
	handlerAlive uint32 = 0
	handlerDead  uint32 = 1
)

type Pod struct{}
type Service struct{}
type Endpoints struct{}
type NetworkPolicy struct{}
type Namespace struct{}
type NodeObj struct{}

var (
	PodType       = reflect.TypeOf(&Pod{})
	ServiceType   = reflect.TypeOf(&Service{})
	EndpointsType = reflect.TypeOf(&Endpoints{})
	PolicyType    = reflect.TypeOf(&NetworkPolicy{})
	NamespaceType = reflect.TypeOf(&Namespace{})
	NodeType      = reflect.TypeOf(&NodeObj{})
)

type ResourceEventHandlerFuncs struct {
	AddFunc    func(obj interface{})
	DeleteFunc func(obj interface{})
}

type Handler struct {
	ResourceEventHandlerFuncs
	id        uint64
	tombstone uint32
	priority  int
}

func (h *Handler) kill() bool {
	return atomic.CompareAndSwapUint32(&h.tombstone, handlerAlive, handlerDead)
}

type informer struct {
	sync.RWMutex
	oType    reflect.Type
	handlers map[uint64]*Handler
	// event queues of a queued informer; they are drained on shutdown
	queues int
}

// removeAllHandlers must be called with the informer locked.
func (i *informer) removeAllHandlers() {
	for _, handler := range i.handlers {
		if handler.kill() {
			delete(i.handlers, handler.id)
		}
	}
	i.drainQueues()
}

func (i *informer) drainQueues() {
	// wait for the queued events of this informer to be processed
	time.Sleep(time.Duration(i.queues) * 5 * time.Millisecond)
}

type WatchFactory struct {
	handlerCounter uint64
	informers      map[reflect.Type]*informer
	stopChan       chan struct{}
	stopOnce       sync.Once
}

func NewMasterWatchFactory() *WatchFactory {
	wf := &WatchFactory{informers: map[reflect.Type]*informer{}, stopChan: make(chan struct{})}
	for _, t := range []reflect.Type{PodType, ServiceType, EndpointsType, PolicyType, NamespaceType, NodeType} {
		wf.informers[t] = &informer{oType: t, handlers: map[uint64]*Handler{}, queues: 1}
	}
	return wf
}

func (wf *WatchFactory) addHandler(objType reflect.Type, funcs ResourceEventHandlerFuncs) *Handler {
	inf := wf.informers[objType]
	inf.Lock()
	defer inf.Unlock()
	h := &Handler{ResourceEventHandlerFuncs: funcs, id: atomic.AddUint64(&wf.handlerCounter, 1)}
	inf.handlers[h.id] = h
	return h
}

// Shutdown removes all handlers
func (wf *WatchFactory) Shutdown() {
	wf.stopOnce.Do(func() { close(wf.stopChan) })

	for _, inf := range wf.informers {
		inf.shutdown()
	}
}

func (i *informer) shutdown() {
	i.Lock()
	defer i.Unlock()
	i.removeAllHandlers()
}

func main() {
	for attempt := 1; attempt <= 40; attempt++ {
		wf := NewMasterWatchFactory()
		for t := range wf.informers {
			wf.addHandler(t, ResourceEventHandlerFuncs{AddFunc: func(obj interface{}) {}})
		}

		done := make(chan string)
		// ovnkube-controller stops the shared watch factory ...
		go func() {
			wf.Shutdown()
			done <- "controller"
		}()
		// ... while the node side tears it down on its error path.
		go func() {
			wf.Shutdown()
			done <- "node"
		}()
		<-done
		<-done
	}
	fmt.Println("all shutdowns completed")
}
