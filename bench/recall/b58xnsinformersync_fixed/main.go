// Fixed version (PR #35 applied).
// Project: maistra/xns-informer (cross-namespace informers used by Maistra /
// OpenShift Service Mesh istiod), late 2022 / early 2023.
// Files: pkg/informers/informer.go (multiNamespaceInformer.HasSynced,
// AddNamespace, NewMultiNamespaceInformer), pkg/informers/namespace_set.go
// (namespaceSet.SetNamespaces, Initialized, AddHandler).
// Fix: maistra/xns-informer PR #35 "OSSM-2419 Prevent deadlock between
// multiNamespaceInformer.lock and namespaceSet.lock" (cherry-picked as #36-#39,
// and into maistra/istio as OSSM-2375, PRs #725-#727).
//
// Every multiNamespaceInformer created by the factory shares one NamespaceSet
// and registers its AddNamespace/RemoveNamespace methods as a handler on it.
// namespaceSet.SetNamespaces holds the set's lock while it calls every
// handler's OnAdd, so it ends up in multiNamespaceInformer.AddNamespace, which
// takes the informer's lock: namespaceSet.lock -> informer.lock.
// multiNamespaceInformer.HasSynced, polled by WaitForCacheSync, takes the
// informer's lock first and then asks the set whether it is Initialized(),
// which takes the set's lock: informer.lock -> namespaceSet.lock. When the
// member-roll controller changes the namespace list while istiod waits for
// its caches, the two goroutines deadlock. The fix calls
// i.namespaces.Initialized() before taking i.lock in HasSynced.
package main

import (
	"fmt"
	"sync"
	"time"
)

type SharedIndexInformer interface {
	HasSynced() bool
}

type namespacedInformer struct{ namespace string }

func (f *namespacedInformer) HasSynced() bool { return true }

type NewInformerFunc func(namespace string) SharedIndexInformer

type NamespaceSetHandler interface {
	OnAdd(namespace string)
	OnRemove(namespace string)
}

type NamespaceSetHandlerFuncs struct {
	AddFunc    func(namespace string)
	RemoveFunc func(namespace string)
}

func (h NamespaceSetHandlerFuncs) OnAdd(namespace string) {
	if h.AddFunc != nil {
		h.AddFunc(namespace)
	}
}

func (h NamespaceSetHandlerFuncs) OnRemove(namespace string) {
	if h.RemoveFunc != nil {
		h.RemoveFunc(namespace)
	}
}

type NamespaceSet interface {
	Initialized() bool
	SetNamespaces(namespaces []string)
	AddHandler(handler NamespaceSetHandler)
}

type namespaceSet struct {
	lock       sync.Mutex
	namespaces map[string]struct{}
	handlers   []NamespaceSetHandler
}

func NewNamespaceSet(namespaces ...string) NamespaceSet {
	n := &namespaceSet{}
	n.SetNamespaces(namespaces)
	return n
}

func (n *namespaceSet) Initialized() bool {
	n.lock.Lock()
	defer n.lock.Unlock()
	return n.namespaces != nil
}

func (n *namespaceSet) SetNamespaces(namespaces []string) {
	n.lock.Lock()
	defer n.lock.Unlock()

	newSet := map[string]struct{}{}
	for _, ns := range namespaces {
		newSet[ns] = struct{}{}
	}
	for ns := range n.namespaces {
		if _, ok := newSet[ns]; !ok {
			for _, h := range n.handlers {
				h.OnRemove(ns)
			}
		}
	}
	for ns := range newSet {
		if _, ok := n.namespaces[ns]; !ok {
			for _, h := range n.handlers {
				h.OnAdd(ns)
			}
		}
	}
	n.namespaces = newSet
}

func (n *namespaceSet) AddHandler(handler NamespaceSetHandler) {
	n.lock.Lock()
	defer n.lock.Unlock()
	n.handlers = append(n.handlers, handler)
	for ns := range n.namespaces {
		handler.OnAdd(ns)
	}
}

type multiNamespaceInformer struct {
	informers   map[string]SharedIndexInformer
	lock        sync.Mutex
	namespaces  NamespaceSet
	newInformer NewInformerFunc
}

func NewMultiNamespaceInformer(namespaces NamespaceSet, newInformer NewInformerFunc) *multiNamespaceInformer {
	informer := &multiNamespaceInformer{
		informers:   map[string]SharedIndexInformer{},
		namespaces:  namespaces,
		newInformer: newInformer,
	}
	namespaces.AddHandler(NamespaceSetHandlerFuncs{
		AddFunc:    informer.AddNamespace,
		RemoveFunc: informer.RemoveNamespace,
	})
	return informer
}

func (i *multiNamespaceInformer) AddNamespace(namespace string) {
	i.lock.Lock()
	defer i.lock.Unlock()
	if _, ok := i.informers[namespace]; ok {
		return
	}
	i.informers[namespace] = i.newInformer(namespace)
}

func (i *multiNamespaceInformer) RemoveNamespace(namespace string) {
	i.lock.Lock()
	defer i.lock.Unlock()
	delete(i.informers, namespace)
}

// HasSynced checks if each namespaced informer has synced.
func (i *multiNamespaceInformer) HasSynced() bool {
	// Ask the namespace set before taking i.lock (SetNamespaces -> AddNamespace).
	if !i.namespaces.Initialized() {
		return false
	}

	i.lock.Lock()
	defer i.lock.Unlock()
	for _, informer := range i.informers {
		if !informer.HasSynced() {
			return false
		}
	}
	return true
}

func main() {
	namespaces := NewNamespaceSet("istio-system")

	// Two resource informers built by the factory share the member roll.
	// Building a namespaced informer (list/watch setup) takes a while.
	slowNew := func(namespace string) SharedIndexInformer {
		time.Sleep(100 * time.Millisecond)
		return &namespacedInformer{namespace: namespace}
	}
	fastNew := func(namespace string) SharedIndexInformer {
		return &namespacedInformer{namespace: namespace}
	}
	services := NewMultiNamespaceInformer(namespaces, slowNew)
	pods := NewMultiNamespaceInformer(namespaces, fastNew)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // member-roll controller adds a namespace
		defer wg.Done()
		namespaces.SetNamespaces([]string{"istio-system", "bookinfo"})
	}()
	go func() { // istiod waiting for caches
		defer wg.Done()
		time.Sleep(50 * time.Millisecond)
		fmt.Println("pods synced:", pods.HasSynced())
	}()
	wg.Wait()
	fmt.Println("services synced:", services.HasSynced())
}
