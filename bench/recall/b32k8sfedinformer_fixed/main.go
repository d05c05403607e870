// Project: kubernetes (federation/pkg/federation-controller/util/federated_informer.go,
// pkg/client/cache: controller.go, delta_fifo.go, store.go)
// Issue: kubernetes/kubernetes#30855, fixed by kubernetes/kubernetes#30872 "Fix deadlock
// possibility in federated informer".
//
// Bug: the federated informer watches Cluster objects with a cache.Controller. The controller's
// processLoop pops from the DeltaFIFO, and DeltaFIFO.Pop runs the PopProcessFunc while holding
// the FIFO's lock; the process function hands each delta to the ResourceEventHandlerFuncs the
// federated informer registered, and its UpdateFunc (a cluster whose spec changed) ends in
// federatedInformer.addCluster, which takes the informer's embedded mutex (f.Lock(), line 613)
// while the FIFO lock is still held. Any federation controller that checks
// FederatedInformer.ClustersSynced() takes the same embedded mutex first (f.Lock(), line 606) and
// then asks the cluster controller HasSynced(), which goes through the Queue interface to
// DeltaFIFO.HasSynced and takes the FIFO lock (f.lock.Lock(), line 158). FIFO lock -> informer
// mutex on the controller goroutine against informer mutex -> FIFO lock on the caller: AB-BA.
// The fix stopped ClustersSynced from taking the informer mutex (clusterInformer is set once).
// (The reflector is left out: main feeds the FIFO the way the reflector would.)
package main

import (
	"fmt"
	"sync"
	"time"
)

// ---- pkg/client/cache ----

type KeyFunc func(obj interface{}) (string, error)

type Store interface {
	Add(obj interface{}) error
	Update(obj interface{}) error
	Delete(obj interface{}) error
	List() []interface{}
	Get(obj interface{}) (item interface{}, exists bool, err error)
	GetByKey(key string) (item interface{}, exists bool, err error)
}

// cache is a Store on a thread safe map.
type cache struct {
	lock    sync.RWMutex
	items   map[string]interface{}
	keyFunc KeyFunc
}

func NewStore(keyFunc KeyFunc) Store {
	return &cache{items: map[string]interface{}{}, keyFunc: keyFunc}
}

func (c *cache) Add(obj interface{}) error {
	key, err := c.keyFunc(obj)
	if err != nil {
		return err
	}
	c.lock.Lock()
	defer c.lock.Unlock()
	c.items[key] = obj
	return nil
}

func (c *cache) Update(obj interface{}) error { return c.Add(obj) }

func (c *cache) Delete(obj interface{}) error {
	key, err := c.keyFunc(obj)
	if err != nil {
		return err
	}
	c.lock.Lock()
	defer c.lock.Unlock()
	delete(c.items, key)
	return nil
}

func (c *cache) List() []interface{} {
	c.lock.RLock()
	defer c.lock.RUnlock()
	list := make([]interface{}, 0, len(c.items))
	for _, item := range c.items {
		list = append(list, item)
	}
	return list
}

func (c *cache) Get(obj interface{}) (interface{}, bool, error) {
	key, err := c.keyFunc(obj)
	if err != nil {
		return nil, false, err
	}
	return c.GetByKey(key)
}

func (c *cache) GetByKey(key string) (interface{}, bool, error) {
	c.lock.RLock()
	defer c.lock.RUnlock()
	item, exists := c.items[key]
	return item, exists, nil
}

type DeltaType string

const (
	Added   DeltaType = "Added"
	Updated DeltaType = "Updated"
	Deleted DeltaType = "Deleted"
	Sync    DeltaType = "Sync"
)

type Delta struct {
	Type   DeltaType
	Object interface{}
}

type Deltas []Delta

type PopProcessFunc func(interface{}) error

// Queue is the interface the controller pops from.
type Queue interface {
	Store
	Pop(PopProcessFunc) (interface{}, error)
	AddIfNotPresent(interface{}) error
	HasSynced() bool
}

// DeltaFIFO is like a FIFO, but allows you to process deletes.
type DeltaFIFO struct {
	// lock/cond protects access to 'items' and 'queue'.
	lock sync.RWMutex
	cond sync.Cond

	items map[string]Deltas
	queue []string

	// populated is true if the first batch of items inserted by Replace() has been populated
	// or Delete/Add/Update was called first.
	populated bool
	// initialPopulationCount is the number of items inserted by the first call of Replace()
	initialPopulationCount int

	keyFunc      KeyFunc
	knownObjects Store
}

func NewDeltaFIFO(keyFunc KeyFunc, knownObjects Store) *DeltaFIFO {
	f := &DeltaFIFO{
		items:        map[string]Deltas{},
		queue:        []string{},
		keyFunc:      keyFunc,
		knownObjects: knownObjects,
	}
	f.cond.L = &f.lock
	return f
}

// HasSynced returns true if an Add/Update/Delete/AddIfNotPresent are called first,
// or an Update called first but the first batch of items inserted by Replace() has been popped
func (f *DeltaFIFO) HasSynced() bool {
	f.lock.Lock()
	defer f.lock.Unlock()
	return f.populated && f.initialPopulationCount == 0
}

func (f *DeltaFIFO) Add(obj interface{}) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.populated = true
	return f.queueActionLocked(Added, obj)
}

func (f *DeltaFIFO) Update(obj interface{}) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.populated = true
	return f.queueActionLocked(Updated, obj)
}

func (f *DeltaFIFO) Delete(obj interface{}) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.populated = true
	return f.queueActionLocked(Deleted, obj)
}

func (f *DeltaFIFO) AddIfNotPresent(obj interface{}) error {
	deltas, ok := obj.(Deltas)
	if !ok || len(deltas) == 0 {
		return fmt.Errorf("object must be of type deltas")
	}
	id, err := f.keyFunc(deltas[len(deltas)-1].Object)
	if err != nil {
		return err
	}
	f.lock.Lock()
	defer f.lock.Unlock()
	f.populated = true
	if _, exists := f.items[id]; exists {
		return nil
	}
	f.queue = append(f.queue, id)
	f.items[id] = deltas
	f.cond.Broadcast()
	return nil
}

func (f *DeltaFIFO) queueActionLocked(actionType DeltaType, obj interface{}) error {
	id, err := f.keyFunc(obj)
	if err != nil {
		return err
	}
	newDeltas := append(f.items[id], Delta{actionType, obj})
	_, exists := f.items[id]
	if !exists {
		f.queue = append(f.queue, id)
	}
	f.items[id] = newDeltas
	f.cond.Broadcast()
	return nil
}

func (f *DeltaFIFO) List() []interface{} {
	f.lock.RLock()
	defer f.lock.RUnlock()
	list := make([]interface{}, 0, len(f.items))
	for _, item := range f.items {
		list = append(list, item[len(item)-1].Object)
	}
	return list
}

func (f *DeltaFIFO) Get(obj interface{}) (interface{}, bool, error) {
	key, err := f.keyFunc(obj)
	if err != nil {
		return nil, false, err
	}
	return f.GetByKey(key)
}

func (f *DeltaFIFO) GetByKey(key string) (interface{}, bool, error) {
	f.lock.RLock()
	defer f.lock.RUnlock()
	d, exists := f.items[key]
	return d, exists, nil
}

// Pop blocks until an item is added to the queue, and then returns it. The item is processed
// by the process function while the queue's lock is held.
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
			// Item may have been deleted subsequently.
			continue
		}
		delete(f.items, id)
		err := process(item)
		// Don't need to copyDeltas here, because we're transferring
		// ownership to the caller.
		return item, err
	}
}

// Replace is called by the reflector with the result of a List.
func (f *DeltaFIFO) Replace(list []interface{}, resourceVersion string) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	for _, item := range list {
		if err := f.queueActionLocked(Sync, item); err != nil {
			return err
		}
	}
	if !f.populated {
		f.populated = true
		f.initialPopulationCount = len(list)
	}
	return nil
}

type ProcessFunc func(obj interface{}) error

type Config struct {
	Queue
	Process      ProcessFunc
	RetryOnError bool
}

type ControllerInterface interface {
	Run(stopCh <-chan struct{})
	HasSynced() bool
}

type Controller struct {
	config Config
}

func New(c *Config) *Controller {
	return &Controller{config: *c}
}

// Run begins processing items, and will continue until a value is sent down stopCh.
func (c *Controller) Run(stopCh <-chan struct{}) {
	// (the reflector that lists and watches into c.config.Queue is left out)
	c.processLoop()
}

// Returns true once this controller has completed an initial resource listing
func (c *Controller) HasSynced() bool {
	return c.config.Queue.HasSynced()
}

func (c *Controller) processLoop() {
	for {
		obj, err := c.config.Queue.Pop(PopProcessFunc(c.config.Process))
		if err != nil {
			if c.config.RetryOnError {
				// This is the safe way to re-enqueue.
				c.config.Queue.AddIfNotPresent(obj)
			}
		}
	}
}

type ResourceEventHandler interface {
	OnAdd(obj interface{})
	OnUpdate(oldObj, newObj interface{})
	OnDelete(obj interface{})
}

type ResourceEventHandlerFuncs struct {
	AddFunc    func(obj interface{})
	UpdateFunc func(oldObj, newObj interface{})
	DeleteFunc func(obj interface{})
}

func (r ResourceEventHandlerFuncs) OnAdd(obj interface{}) {
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

func MetaNamespaceKeyFunc(obj interface{}) (string, error) {
	if d, ok := obj.(Deltas); ok && len(d) > 0 {
		obj = d[len(d)-1].Object
	}
	if c, ok := obj.(*Cluster); ok {
		return c.Name, nil
	}
	return "", fmt.Errorf("object has no meta: %v", obj)
}

// NewInformer returns a Store and a controller for populating the store while also providing
// event notifications.
func NewInformer(h ResourceEventHandler) (Store, *Controller) {
	// This will hold the client state, as we know it.
	clientState := NewStore(MetaNamespaceKeyFunc)

	// This will hold incoming changes. Note how we pass clientState in as a
	// KeyLister, that way resync operations will result in the correct set
	// of update/delete deltas.
	fifo := NewDeltaFIFO(MetaNamespaceKeyFunc, clientState)

	cfg := &Config{
		Queue: fifo,

		Process: func(obj interface{}) error {
			// from oldest to newest
			for _, d := range obj.(Deltas) {
				switch d.Type {
				case Sync, Added, Updated:
					if old, exists, err := clientState.Get(d.Object); err == nil && exists {
						if err := clientState.Update(d.Object); err != nil {
							return err
						}
						h.OnUpdate(old, d.Object)
					} else {
						if err := clientState.Add(d.Object); err != nil {
							return err
						}
						h.OnAdd(d.Object)
					}
				case Deleted:
					if err := clientState.Delete(d.Object); err != nil {
						return err
					}
					h.OnDelete(d.Object)
				}
			}
			return nil
		},
	}
	return clientState, New(cfg)
}

// ---- federation api ----

type ClusterSpec struct {
	ServerAddress string
}

type Cluster struct {
	Name  string
	Spec  ClusterSpec
	Ready bool
}

type Interface interface{ Name() string }

type clientset struct{ server string }

func (c *clientset) Name() string { return c.server }

// ---- federation/pkg/federation-controller/util ----

type TargetInformerFactory func(*Cluster, Interface) (Store, ControllerInterface)

type ClusterLifecycleHandlerFuncs struct {
	// Fired when the cluster becomes available.
	ClusterAvailable func(*Cluster)
	// Fired when the cluster becomes unavailable. The second arg contains data that was present
	// in the cluster before deletion.
	ClusterUnavailable func(*Cluster, []interface{})
}

type FederatedReadOnlyStore interface {
	ListFromCluster(clusterName string) ([]interface{}, error)
}

type FederatedInformer interface {
	GetTargetStore() FederatedReadOnlyStore
	ClustersSynced() bool
	Start()
	Stop()
}

type informer struct {
	controller ControllerInterface
	store      Store
	stopChan   chan struct{}
}

type federatedInformerImpl struct {
	sync.Mutex

	// Informer on federated clusters.
	clusterInformer informer

	// Target informers factory
	targetInformerFactory TargetInformerFactory

	// Structures returned by targetInformerFactory
	targetInformers map[string]informer

	// A function to build clients.
	clientFactory func(*Cluster) (Interface, error)
}

type federatedStoreImpl struct {
	federatedInformer *federatedInformerImpl
}

func isClusterReady(cluster *Cluster) bool { return cluster.Ready }

// Builds a FederatedInformer for the given federation client and factory.
func NewFederatedInformer(
	targetInformerFactory TargetInformerFactory,
	clusterLifecycle *ClusterLifecycleHandlerFuncs) FederatedInformer {

	federatedInformer := &federatedInformerImpl{
		targetInformerFactory: targetInformerFactory,
		clientFactory: func(cluster *Cluster) (Interface, error) {
			return &clientset{server: cluster.Spec.ServerAddress}, nil
		},
		targetInformers: make(map[string]informer),
	}

	getClusterData := func(name string) []interface{} {
		data, err := federatedInformer.GetTargetStore().ListFromCluster(name)
		if err != nil {
			return make([]interface{}, 0)
		}
		return data
	}

	federatedInformer.clusterInformer.store, federatedInformer.clusterInformer.controller = NewInformer(
		ResourceEventHandlerFuncs{
			DeleteFunc: func(old interface{}) {
				oldCluster, ok := old.(*Cluster)
				if ok {
					var data []interface{}
					if clusterLifecycle.ClusterUnavailable != nil {
						data = getClusterData(oldCluster.Name)
					}
					federatedInformer.deleteCluster(oldCluster)
					if clusterLifecycle.ClusterUnavailable != nil {
						clusterLifecycle.ClusterUnavailable(oldCluster, data)
					}
				}
			},
			AddFunc: func(cur interface{}) {
				curCluster, ok := cur.(*Cluster)
				if ok && isClusterReady(curCluster) {
					federatedInformer.addCluster(curCluster)
					if clusterLifecycle.ClusterAvailable != nil {
						clusterLifecycle.ClusterAvailable(curCluster)
					}
				}
			},
			UpdateFunc: func(old, cur interface{}) {
				oldCluster, ok := old.(*Cluster)
				if !ok {
					return
				}
				curCluster, ok := cur.(*Cluster)
				if !ok {
					return
				}
				if isClusterReady(oldCluster) != isClusterReady(curCluster) || oldCluster.Spec != curCluster.Spec {
					var data []interface{}
					if clusterLifecycle.ClusterUnavailable != nil {
						data = getClusterData(oldCluster.Name)
					}
					federatedInformer.deleteCluster(oldCluster)
					if clusterLifecycle.ClusterUnavailable != nil {
						clusterLifecycle.ClusterUnavailable(oldCluster, data)
					}

					if isClusterReady(curCluster) {
						federatedInformer.addCluster(curCluster)
						if clusterLifecycle.ClusterAvailable != nil {
							clusterLifecycle.ClusterAvailable(curCluster)
						}
					}
				}
			},
		},
	)
	return federatedInformer
}

func (f *federatedInformerImpl) Stop() {
	f.Lock()
	defer f.Unlock()

	close(f.clusterInformer.stopChan)
	for _, informer := range f.targetInformers {
		close(informer.stopChan)
	}
}

func (f *federatedInformerImpl) Start() {
	f.Lock()
	defer f.Unlock()

	f.clusterInformer.stopChan = make(chan struct{})
	go f.clusterInformer.controller.Run(f.clusterInformer.stopChan)
}

func (f *federatedInformerImpl) getClientsetForClusterUnlocked(clusterName string) (Interface, error) {
	if cluster, found, err := f.getReadyClusterUnlocked(clusterName); found && err == nil {
		return f.clientFactory(cluster)
	} else {
		if err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("cluster %q not found", clusterName)
}

func (f *federatedInformerImpl) getReadyClusterUnlocked(name string) (*Cluster, bool, error) {
	if obj, exist, err := f.clusterInformer.store.GetByKey(name); exist && err == nil {
		if cluster, ok := obj.(*Cluster); ok {
			if isClusterReady(cluster) {
				return cluster, true, nil
			}
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("wrong data in FederatedInformerImpl cluster store: %v", obj)
	} else {
		return nil, false, err
	}
}

// Synced returns true if the view is synced (for the first time)
func (f *federatedInformerImpl) ClustersSynced() bool {
	return f.clusterInformer.controller.HasSynced()
}

// Adds the given cluster to federated informer.
func (f *federatedInformerImpl) addCluster(cluster *Cluster) {
	f.Lock()
	defer f.Unlock()
	name := cluster.Name
	if client, err := f.getClientsetForClusterUnlocked(name); err == nil {
		store, controller := f.targetInformerFactory(cluster, client)
		targetInformer := informer{
			controller: controller,
			store:      store,
			stopChan:   make(chan struct{}),
		}
		f.targetInformers[name] = targetInformer
		go targetInformer.controller.Run(targetInformer.stopChan)
	} else {
		fmt.Printf("Failed to create a client for cluster: %v\n", err)
	}
}

// Removes the cluster from federated informer.
func (f *federatedInformerImpl) deleteCluster(cluster *Cluster) {
	f.Lock()
	defer f.Unlock()
	name := cluster.Name
	if targetInformer, found := f.targetInformers[name]; found {
		close(targetInformer.stopChan)
	}
	delete(f.targetInformers, name)
}

// Returns a store created over all stores from target informers.
func (f *federatedInformerImpl) GetTargetStore() FederatedReadOnlyStore {
	return &federatedStoreImpl{
		federatedInformer: f,
	}
}

// Returns all items in the given cluster.
func (fs *federatedStoreImpl) ListFromCluster(clusterName string) ([]interface{}, error) {
	fs.federatedInformer.Lock()
	defer fs.federatedInformer.Unlock()

	result := make([]interface{}, 0)
	if targetInformer, found := fs.federatedInformer.targetInformers[clusterName]; found {
		values := targetInformer.store.List()
		result = append(result, values...)
	}
	return result, nil
}

// ---- a target informer for the secrets of a member cluster ----

type secretController struct{}

func (secretController) Run(stopCh <-chan struct{}) { <-stopCh }
func (secretController) HasSynced() bool            { return true }

func main() {
	available := make(chan *Cluster, 4)
	unavailable := make(chan struct{})

	fedInformer := NewFederatedInformer(
		func(cluster *Cluster, client Interface) (Store, ControllerInterface) {
			return NewStore(MetaNamespaceKeyFunc), secretController{}
		},
		&ClusterLifecycleHandlerFuncs{
			ClusterAvailable: func(cluster *Cluster) {
				available <- cluster
			},
			ClusterUnavailable: func(cluster *Cluster, _ []interface{}) {
				// The secret controller reacts to a cluster going away by re-checking the
				// federation (in its own goroutine, below); handling the change takes a moment.
				close(unavailable)
				time.Sleep(20 * time.Millisecond)
			},
		},
	)
	fedInformer.Start()

	// The reflector lists the clusters into the cluster informer's FIFO.
	fifo := fedInformer.(*federatedInformerImpl).clusterInformer.controller.(*Controller).config.Queue.(*DeltaFIFO)
	fifo.Replace([]interface{}{&Cluster{Name: "us-east", Spec: ClusterSpec{ServerAddress: "10.0.0.1"}, Ready: true}}, "1")
	<-available

	// The secret controller's reconcile loop checks whether the federation view is synced
	// before it acts on a cluster change.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-unavailable
		fmt.Println("clusters synced:", fedInformer.ClustersSynced())
	}()

	// The watch reports that the cluster's server address changed.
	fifo.Update(&Cluster{Name: "us-east", Spec: ClusterSpec{ServerAddress: "10.0.0.2"}, Ready: true})

	wg.Wait()
	c := <-available
	fmt.Println("cluster re-added with server", c.Spec.ServerAddress)
}
