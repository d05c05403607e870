// Project: kubernetes/kubernetes (federation/pkg/federation-controller/util/federated_informer.go, pkg/client/cache/controller.go, pkg/client/cache/delta_fifo.go), v1.4 development, August 2016 (PR #30872, approximate).
// Bug: federatedInformerImpl.ClustersSynced holds the informer mutex while calling clusterInformer.controller.HasSynced, which takes the DeltaFIFO lock; the cluster informer's processLoop runs the event handlers inside DeltaFIFO.Pop with the FIFO lock held, and its AddFunc calls addCluster, which takes the informer mutex.
package main

import (
	"fmt"
	"sync"
	"time"
)

// ---- pkg/client/cache: store.go, delta_fifo.go, controller.go ----

type Store interface {
	Add(obj interface{}) error
	Get(obj interface{}) (item interface{}, exists bool, err error)
}

type cache struct {
	lock  sync.RWMutex
	items map[string]interface{}
}

func (c *cache) Add(obj interface{}) error {
	c.lock.Lock()
	defer c.lock.Unlock()
	c.items[obj.(*Cluster).Name] = obj
	return nil
}

func (c *cache) Get(obj interface{}) (interface{}, bool, error) {
	c.lock.RLock()
	defer c.lock.RUnlock()
	item, ok := c.items[obj.(*Cluster).Name]
	return item, ok, nil
}

type Delta struct {
	Type   string
	Object interface{}
}

type Deltas []Delta

type PopProcessFunc func(interface{}) error

type DeltaFIFO struct {
	lock                   sync.RWMutex
	cond                   sync.Cond
	items                  map[string]Deltas
	queue                  []string
	populated              bool
	initialPopulationCount int
}

func NewDeltaFIFO() *DeltaFIFO {
	f := &DeltaFIFO{items: map[string]Deltas{}}
	f.cond.L = &f.lock
	return f
}

func (f *DeltaFIFO) HasSynced() bool {
	f.lock.Lock()
	defer f.lock.Unlock()
	return f.populated && f.initialPopulationCount == 0
}

func (f *DeltaFIFO) Replace(list []interface{}, resourceVersion string) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	for _, obj := range list {
		id := obj.(*Cluster).Name
		if _, ok := f.items[id]; !ok {
			f.queue = append(f.queue, id)
		}
		f.items[id] = append(f.items[id], Delta{"Sync", obj})
	}
	if !f.populated {
		f.populated = true
		f.initialPopulationCount = len(list)
	}
	f.cond.Broadcast()
	return nil
}

func (f *DeltaFIFO) Pop(process PopProcessFunc) (interface{}, error) {
	f.lock.Lock()
	defer f.lock.Unlock()
	for {
		for len(f.queue) == 0 {
			f.cond.Wait()
		}
		id := f.queue[0]
		f.queue = f.queue[1:]
		item, ok := f.items[id]
		if f.initialPopulationCount > 0 {
			f.initialPopulationCount--
		}
		if !ok {
			continue
		}
		delete(f.items, id)
		err := process(item)
		return item, err
	}
}

type ResourceEventHandlerFuncs struct {
	AddFunc func(obj interface{})
}

func (r ResourceEventHandlerFuncs) OnAdd(obj interface{}) {
	if r.AddFunc != nil {
		r.AddFunc(obj)
	}
}

type ListFunc func() []interface{}

type Controller struct {
	queue   *DeltaFIFO
	list    ListFunc
	process PopProcessFunc
}

func (c *Controller) Run(stopCh <-chan struct{}) {
	c.queue.Replace(c.list(), "1") // Reflector.ListAndWatch
	go func() {
		for {
			c.queue.Pop(c.process) // processLoop
		}
	}()
	<-stopCh
}

func (c *Controller) HasSynced() bool { return c.queue.HasSynced() }

func NewInformer(list ListFunc, h ResourceEventHandlerFuncs) (Store, *Controller) {
	clientState := &cache{items: map[string]interface{}{}}
	c := &Controller{queue: NewDeltaFIFO(), list: list}
	c.process = func(obj interface{}) error {
		for _, d := range obj.(Deltas) {
			if _, exists, _ := clientState.Get(d.Object); !exists {
				clientState.Add(d.Object)
				h.OnAdd(d.Object)
			}
		}
		return nil
	}
	return clientState, c
}

// ---- federation/pkg/federation-controller/util/federated_informer.go ----

type Cluster struct {
	Name  string
	Ready bool
}

type informer struct {
	controller *Controller
	store      Store
	stopChan   chan struct{}
}

type federatedInformerImpl struct {
	sync.Mutex
	clusterInformer informer
	targetInformers map[string]informer
}

func isClusterReady(cluster *Cluster) bool {
	time.Sleep(50 * time.Millisecond) // widen the window: condition checks, logging
	return cluster.Ready
}

func NewFederatedInformer(clusters []interface{}) *federatedInformerImpl {
	federatedInformer := &federatedInformerImpl{targetInformers: map[string]informer{}}
	federatedInformer.clusterInformer.store, federatedInformer.clusterInformer.controller = NewInformer(
		func() []interface{} { return clusters },
		ResourceEventHandlerFuncs{
			AddFunc: func(cur interface{}) {
				curCluster, ok := cur.(*Cluster)
				if ok && isClusterReady(curCluster) {
					federatedInformer.addCluster(curCluster)
				}
			},
		})
	return federatedInformer
}

func (f *federatedInformerImpl) ClustersSynced() bool {
	return f.clusterInformer.controller.HasSynced()
}

func (f *federatedInformerImpl) addCluster(cluster *Cluster) {
	f.Lock()
	defer f.Unlock()
	f.targetInformers[cluster.Name] = informer{stopChan: make(chan struct{})}
}

func (f *federatedInformerImpl) Start() {
	f.Lock()
	defer f.Unlock()
	f.clusterInformer.stopChan = make(chan struct{})
	go f.clusterInformer.controller.Run(f.clusterInformer.stopChan)
}

func main() {
	fi := NewFederatedInformer([]interface{}{&Cluster{Name: "us-east", Ready: true}, &Cluster{Name: "eu-west", Ready: true}})
	fi.Start()
	// A federation controller (e.g. the secret controller) waits for the informer.
	time.Sleep(20 * time.Millisecond)
	for !fi.ClustersSynced() {
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("clusters synced")
}
