// Command b72ctrlruntimenewinformer models controller-runtime's informer map
// (pkg/cache/internal/informers.go) and the NewInformer hook of cache.Options,
// whose type is the named func type NewInformerFunc.
//
// Modelled on controller-runtime, no specific upstream bug. Informers.Get
// peeks at the map under the read lock, else calls addInformerToMap, which
// takes the write lock, re-checks the map and builds the informer with the
// NewInformerFunc from the options. The operator here installs a NewInformer
// that, for namespaced kinds, fetches the shared Namespace informer to filter
// by namespace labels. That lookup goes back through Informers.Get and
// Informers.Peek, whose RLock waits on the write lock the same goroutine
// holds, so the first GetInformer for a Pod never returns.
//
// The fixed twin calls the NewInformerFunc before taking the write lock and
// re-checks the map under the lock afterwards.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type GroupVersionKind struct {
	Group, Version, Kind string
}

type Object interface {
	GroupVersionKind() GroupVersionKind
	Namespaced() bool
}

type Pod struct{}

func (Pod) GroupVersionKind() GroupVersionKind { return GroupVersionKind{"", "v1", "Pod"} }
func (Pod) Namespaced() bool                   { return true }

type Namespace struct{}

func (Namespace) GroupVersionKind() GroupVersionKind { return GroupVersionKind{"", "v1", "Namespace"} }
func (Namespace) Namespaced() bool                   { return false }

type ListWatch struct {
	GVK       GroupVersionKind
	Namespace string
}

type Indexers map[string]func(obj Object) ([]string, error)

type SharedIndexInformer interface {
	HasSynced() bool
	Run(ctx context.Context)
}

type sharedIndexInformer struct {
	lw       *ListWatch
	resync   time.Duration
	indexers Indexers
	synced   bool
	filter   func(ns string) bool
}

func (s *sharedIndexInformer) HasSynced() bool         { return s.synced }
func (s *sharedIndexInformer) Run(ctx context.Context) { s.synced = true }

func NewSharedIndexInformer(lw *ListWatch, obj Object, resync time.Duration, indexers Indexers) SharedIndexInformer {
	return &sharedIndexInformer{lw: lw, resync: resync, indexers: indexers}
}

type NewInformerFunc func(lw *ListWatch, obj Object, resync time.Duration, indexers Indexers) SharedIndexInformer

type InformersOpts struct {
	ResyncPeriod time.Duration
	Namespace    string
	NewInformer  NewInformerFunc
}

type Cache struct {
	Informer SharedIndexInformer
	scopeNS  string
}

type Informers struct {
	mu          sync.RWMutex
	tracker     map[GroupVersionKind]*Cache
	started     bool
	ctx         context.Context
	resync      time.Duration
	namespace   string
	newInformer NewInformerFunc
}

func NewInformers(opts InformersOpts) *Informers {
	newInformer := NewSharedIndexInformer
	if opts.NewInformer != nil {
		newInformer = opts.NewInformer
	}
	return &Informers{
		tracker:     map[GroupVersionKind]*Cache{},
		resync:      opts.ResyncPeriod,
		namespace:   opts.Namespace,
		newInformer: newInformer,
	}
}

func (ip *Informers) Start(ctx context.Context) {
	ip.mu.Lock()
	defer ip.mu.Unlock()
	ip.ctx = ctx
	for _, c := range ip.tracker {
		c.Informer.Run(ctx)
	}
	ip.started = true
}

func (ip *Informers) Peek(gvk GroupVersionKind) (*Cache, bool, bool) {
	ip.mu.RLock()
	defer ip.mu.RUnlock()
	i, ok := ip.tracker[gvk]
	return i, ip.started, ok
}

func (ip *Informers) Get(ctx context.Context, obj Object) (bool, *Cache, error) {
	gvk := obj.GroupVersionKind()
	i, started, ok := ip.Peek(gvk)
	if !ok {
		var err error
		if i, started, err = ip.addInformerToMap(gvk, obj); err != nil {
			return started, nil, err
		}
	}
	return started, i, nil
}

func (ip *Informers) makeListWatcher(gvk GroupVersionKind, obj Object) *ListWatch {
	lw := &ListWatch{GVK: gvk}
	if obj.Namespaced() {
		lw.Namespace = ip.namespace
	}
	return lw
}

func (ip *Informers) addInformerToMap(gvk GroupVersionKind, obj Object) (*Cache, bool, error) {
	lw := ip.makeListWatcher(gvk, obj)
	sii := ip.newInformer(lw, obj, ip.resync, Indexers{})
	ip.mu.Lock()
	defer ip.mu.Unlock()
	if i, ok := ip.tracker[gvk]; ok {
		return i, ip.started, nil
	}
	i := &Cache{Informer: sii, scopeNS: lw.Namespace}
	ip.tracker[gvk] = i
	if ip.started {
		sii.Run(ip.ctx)
	}
	return i, ip.started, nil
}

type namespaceSelector struct {
	informers *Informers
	labels    map[string]string
}

func (n *namespaceSelector) namespaceInformer() SharedIndexInformer {
	_, c, err := n.informers.Get(context.Background(), Namespace{})
	if err != nil {
		return nil
	}
	return c.Informer
}

func (n *namespaceSelector) newInformer(lw *ListWatch, obj Object, resync time.Duration, indexers Indexers) SharedIndexInformer {
	inf := NewSharedIndexInformer(lw, obj, resync, indexers).(*sharedIndexInformer)
	if obj.Namespaced() {
		nsInformer := n.namespaceInformer()
		inf.filter = func(ns string) bool { return nsInformer != nil && nsInformer.HasSynced() }
	}
	return inf
}

func main() {
	sel := &namespaceSelector{labels: map[string]string{"team": "payments"}}
	informers := NewInformers(InformersOpts{ResyncPeriod: 10 * time.Hour, NewInformer: sel.newInformer})
	sel.informers = informers

	started := make(chan struct{})
	go func() {
		informers.Start(context.Background())
		close(started)
	}()
	<-started

	_, c, err := informers.Get(context.Background(), Pod{})
	if err != nil {
		fmt.Println("get informer:", err)
		return
	}
	fmt.Println("pod informer synced:", c.Informer.HasSynced())
}
