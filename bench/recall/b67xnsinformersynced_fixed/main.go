// Command b67xnsinformersynced_fixed is the fixed twin of b67xnsinformersynced,
// which reproduces the shape of a lock-order deadlock
// shipped in maistra/xns-informer (the cross-namespace informers used by the
// Maistra/OpenShift Service Mesh build of Istio), OSSM-2419, fixed by
// maistra/xns-informer PR #35 ("Prevent deadlock between
// multiNamespaceInformer.lock and namespaceSet.lock").
//
// The member-roll controller calls namespaceSet.SetNamespaces, which holds
// namespaceSet.lock while it runs the registered handlers; the handler the
// informer registered in its constructor is the method value
// informer.AddNamespace, which takes multiNamespaceInformer.lock. Meanwhile
// the controller start-up polls multiNamespaceInformer.HasSynced, which holds
// multiNamespaceInformer.lock and asks the set whether it is Initialized,
// taking namespaceSet.lock.
package main

import (
	"fmt"
	"sync"
	"time"
)

// NamespaceSetHandler handles add and remove events for namespace sets.
type NamespaceSetHandler interface {
	OnAdd(namespace string)
	OnRemove(namespace string)
}

// NamespaceSetHandlerFuncs adapts plain functions to NamespaceSetHandler.
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

// NamespaceSet is the dynamic set of member namespaces.
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

func NewUninitializedNamespaceSet() NamespaceSet { return &namespaceSet{} }

func (n *namespaceSet) Initialized() bool {
	n.lock.Lock()
	defer n.lock.Unlock()
	return n.namespaces != nil
}

// SetNamespaces replaces the set and calls the handlers for the difference.
func (n *namespaceSet) SetNamespaces(namespaces []string) {
	n.lock.Lock()
	defer n.lock.Unlock()

	next := make(map[string]struct{}, len(namespaces))
	for _, ns := range namespaces {
		next[ns] = struct{}{}
	}
	klogV2("SetNamespaces: %d namespaces", len(next))

	for ns := range n.namespaces {
		if _, ok := next[ns]; !ok {
			for _, h := range n.handlers {
				h.OnRemove(ns)
			}
		}
	}
	for ns := range next {
		if _, ok := n.namespaces[ns]; !ok {
			for _, h := range n.handlers {
				h.OnAdd(ns)
			}
		}
	}
	n.namespaces = next
}

func (n *namespaceSet) AddHandler(handler NamespaceSetHandler) {
	n.lock.Lock()
	defer n.lock.Unlock()
	n.handlers = append(n.handlers, handler)
	for ns := range n.namespaces {
		handler.OnAdd(ns)
	}
}

// namespacedInformer stands in for a single-namespace SharedIndexInformer.
type namespacedInformer struct {
	namespace string
	synced    bool
}

func (s *namespacedInformer) HasSynced() bool { return s.synced }

type multiNamespaceInformer struct {
	lock        sync.Mutex
	informers   map[string]*namespacedInformer
	namespaces  NamespaceSet
	newInformer func(namespace string) *namespacedInformer
}

func NewMultiNamespaceInformer(namespaces NamespaceSet, newInformer func(string) *namespacedInformer) *multiNamespaceInformer {
	informer := &multiNamespaceInformer{
		informers:   make(map[string]*namespacedInformer),
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
	// Ask the namespace set before taking the informer lock, so the two
	// locks are never held together.
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

func waitForCacheSync(synced func() bool) {
	for !synced() {
		time.Sleep(10 * time.Millisecond)
	}
}

// klogV2 stands in for a verbose log call whose sink is slow.
func klogV2(format string, args ...any) {
	time.Sleep(200 * time.Millisecond)
	fmt.Printf(format+"\n", args...)
}

func main() {
	members := NewUninitializedNamespaceSet()
	informer := NewMultiNamespaceInformer(members, func(ns string) *namespacedInformer {
		return &namespacedInformer{namespace: ns, synced: true}
	})

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // member roll controller
		defer wg.Done()
		members.SetNamespaces([]string{"bookinfo", "istio-system"})
	}()
	go func() { // istiod controllers waiting for their caches
		defer wg.Done()
		time.Sleep(50 * time.Millisecond)
		waitForCacheSync(informer.HasSynced)
	}()
	wg.Wait()
	fmt.Println("caches synced")
}
