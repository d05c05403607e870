// Project: karmada-io/karmada (pkg/util/fedinformer/genericmanager/single-cluster-manager.go)
// Bug: ForResource holds s.lock while registering the event handler on the shared
// informer; the informer replays already-synced objects to the new handler, and
// the handler (the cluster status controller) asks the manager IsInformerSynced,
// which takes s.lock.RLock on the same goroutine.
// Fix: check/record handlers under the lock, but call AddEventHandler without it.
package main

import (
	"context"
	"fmt"
	"log"
	"sync"
)

type GroupVersionResource struct {
	Group, Version, Resource string
}

func (g GroupVersionResource) String() string {
	if g.Group == "" {
		return g.Version + "/" + g.Resource
	}
	return g.Group + "/" + g.Version + ", Resource=" + g.Resource
}

type ResourceEventHandler interface {
	OnAdd(obj interface{}, isInInitialList bool)
	OnUpdate(oldObj, newObj interface{})
	OnDelete(obj interface{})
}

type ResourceEventHandlerFuncs struct {
	AddFunc    func(obj interface{})
	UpdateFunc func(oldObj, newObj interface{})
	DeleteFunc func(obj interface{})
}

func (r ResourceEventHandlerFuncs) OnAdd(obj interface{}, _ bool) {
	if r.AddFunc != nil {
		r.AddFunc(obj)
	}
}

func (r ResourceEventHandlerFuncs) OnUpdate(oldObj, newObj interface{}) {
	if r.UpdateFunc != nil {
		r.UpdateFunc(oldObj, newObj)
	}
}

func (r ResourceEventHandlerFuncs) OnDelete(obj interface{}) {
	if r.DeleteFunc != nil {
		r.DeleteFunc(obj)
	}
}

type sharedIndexInformer struct {
	mu       sync.Mutex
	items    []interface{}
	handlers []ResourceEventHandler
	synced   bool
}

func (i *sharedIndexInformer) AddEventHandler(h ResourceEventHandler) {
	i.mu.Lock()
	i.handlers = append(i.handlers, h)
	items := append([]interface{}(nil), i.items...)
	i.mu.Unlock()
	for _, obj := range items {
		h.OnAdd(obj, true)
	}
}

func (i *sharedIndexInformer) HasSynced() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.synced
}

type informerFactory struct {
	mu        sync.Mutex
	informers map[GroupVersionResource]*sharedIndexInformer
	objects   map[GroupVersionResource][]interface{}
}

func (f *informerFactory) ForResource(gvr GroupVersionResource) *sharedIndexInformer {
	f.mu.Lock()
	defer f.mu.Unlock()
	inf, ok := f.informers[gvr]
	if !ok {
		inf = &sharedIndexInformer{items: f.objects[gvr], synced: true}
		f.informers[gvr] = inf
	}
	return inf
}

type SingleClusterInformerManager interface {
	ForResource(resource GroupVersionResource, handler ResourceEventHandler)
	IsInformerSynced(resource GroupVersionResource) bool
	IsHandlerExist(resource GroupVersionResource, handler ResourceEventHandler) bool
	Stop()
	Context() context.Context
}

type singleClusterInformerManagerImpl struct {
	ctx             context.Context
	cancel          context.CancelFunc
	clusterName     string
	informerFactory *informerFactory
	syncedInformers map[GroupVersionResource]struct{}
	handlers        map[GroupVersionResource][]ResourceEventHandler
	lock            sync.RWMutex
}

func NewSingleClusterInformerManager(clusterName string, objects map[GroupVersionResource][]interface{}) SingleClusterInformerManager {
	ctx, cancel := context.WithCancel(context.Background())
	return &singleClusterInformerManagerImpl{
		ctx:             ctx,
		cancel:          cancel,
		clusterName:     clusterName,
		informerFactory: &informerFactory{informers: map[GroupVersionResource]*sharedIndexInformer{}, objects: objects},
		syncedInformers: map[GroupVersionResource]struct{}{},
		handlers:        map[GroupVersionResource][]ResourceEventHandler{},
	}
}

func (s *singleClusterInformerManagerImpl) ForResource(resource GroupVersionResource, handler ResourceEventHandler) {
	if s.IsHandlerExist(resource, handler) {
		return
	}
	inf := s.informerFactory.ForResource(resource)
	s.appendHandler(resource, handler, inf.HasSynced())
	inf.AddEventHandler(handler)
}

func (s *singleClusterInformerManagerImpl) appendHandler(resource GroupVersionResource, handler ResourceEventHandler, synced bool) {
	s.lock.Lock()
	defer s.lock.Unlock()
	if synced {
		s.syncedInformers[resource] = struct{}{}
	}
	s.handlers[resource] = append(s.handlers[resource], handler)
}

func (s *singleClusterInformerManagerImpl) IsInformerSynced(resource GroupVersionResource) bool {
	s.lock.RLock()
	defer s.lock.RUnlock()
	_, exist := s.syncedInformers[resource]
	return exist
}

func (s *singleClusterInformerManagerImpl) IsHandlerExist(resource GroupVersionResource, handler ResourceEventHandler) bool {
	s.lock.RLock()
	defer s.lock.RUnlock()
	for _, h := range s.handlers[resource] {
		if h == handler {
			return true
		}
	}
	return false
}

func (s *singleClusterInformerManagerImpl) Stop()                    { s.cancel() }
func (s *singleClusterInformerManagerImpl) Context() context.Context { return s.ctx }

type ClusterStatusController struct {
	informerManager SingleClusterInformerManager
	nodeGVR         GroupVersionResource
	readyNodes      int
}

func (c *ClusterStatusController) onNodeAdd(obj interface{}) {
	if !c.informerManager.IsInformerSynced(c.nodeGVR) {
		log.Printf("informer for %s not synced yet, skipping %v", c.nodeGVR, obj)
		return
	}
	c.readyNodes++
}

func main() {
	nodeGVR := GroupVersionResource{Version: "v1", Resource: "nodes"}
	mgr := NewSingleClusterInformerManager("member1", map[GroupVersionResource][]interface{}{
		nodeGVR: {"node-a", "node-b", "node-c"},
	})
	defer mgr.Stop()
	c := &ClusterStatusController{informerManager: mgr, nodeGVR: nodeGVR}
	handler := &ResourceEventHandlerFuncs{AddFunc: c.onNodeAdd}
	mgr.ForResource(nodeGVR, handler)
	fmt.Printf("cluster member1: %d ready nodes, handler registered=%v\n",
		c.readyNodes, mgr.IsHandlerExist(nodeGVR, handler))
}
