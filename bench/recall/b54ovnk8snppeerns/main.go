// Project: ovn-org/ovn-kubernetes (go-controller, the OVN CNI used by OpenShift), autumn 2019.
// Files/functions: go-controller/pkg/ovn/policy.go (handlePeerNamespaceAndPodSelector,
// handlePeerPodSelectorAddUpdate, namespacePolicy), go-controller/pkg/factory/factory.go
// (AddFilteredNamespaceHandler, AddFilteredPodHandler, WatchFactory.addHandler, informer.addHandler).
// Issue/PR: ovn-org/ovn-kubernetes#838 "ovn: fix a deadlock in the NetworkPolicy code" (BZ 1752222).
//
// A NetworkPolicy peer combining a namespaceSelector and a podSelector registers a namespace
// handler whose AddFunc locks the policy (namespacePolicy embeds sync.Mutex), checks np.deleted and,
// still holding np, registers a pod handler with WatchFactory.AddFilteredPodHandler. The factory
// emulates an informer's initial list: addHandler holds the pod informer lock and synchronously
// calls OnAdd for every existing matching pod, i.e. handlePeerPodSelectorAddUpdate, which locks np
// again. With a matching pod already present the thread blocks on the np mutex it holds, while also
// holding the pod informer lock, so NetworkPolicy and Pod events stop. The fix holds np only to read
// np.deleted, drops it before AddFilteredPodHandler and retakes it to record the handler.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

type Namespace struct {
	Name   string
	Labels map[string]string
}

type Pod struct {
	Namespace, Name, IP string
	Labels              map[string]string
}

// cache.ResourceEventHandler and friends, as used by the watch factory.
type ResourceEventHandler interface{ OnAdd(obj interface{}) }

type ResourceEventHandlerFuncs struct{ AddFunc func(obj interface{}) }

func (r ResourceEventHandlerFuncs) OnAdd(obj interface{}) {
	if r.AddFunc != nil {
		r.AddFunc(obj)
	}
}

type FilteringResourceEventHandler struct {
	FilterFunc func(obj interface{}) bool
	Handler    ResourceEventHandler
}

func (r FilteringResourceEventHandler) OnAdd(obj interface{}) {
	if r.FilterFunc(obj) {
		r.Handler.OnAdd(obj)
	}
}

// Handler is the factory's handle on a registered event handler.
type Handler struct {
	FilteringResourceEventHandler
	id uint64
}

type informer struct {
	sync.Mutex
	items    []interface{}
	handlers map[uint64]*Handler
}

func (i *informer) addHandler(id uint64, filterFunc func(obj interface{}) bool, funcs ResourceEventHandler, existingItems []interface{}) *Handler {
	handler := &Handler{FilteringResourceEventHandler{FilterFunc: filterFunc, Handler: funcs}, id}
	// Send existing items to the handler's add function; informers usually do this
	for _, obj := range existingItems {
		handler.OnAdd(obj)
	}
	i.handlers[id] = handler
	return handler
}

type WatchFactory struct {
	handlerCounter uint64
	informers      map[string]*informer
}

func labelsMatch(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func (wf *WatchFactory) addHandler(objType, namespace string, sel map[string]string, funcs ResourceEventHandler) *Handler {
	inf := wf.informers[objType]
	filterFunc := func(obj interface{}) bool {
		if pod, ok := obj.(*Pod); ok {
			return (namespace == "" || pod.Namespace == namespace) && labelsMatch(sel, pod.Labels)
		}
		return labelsMatch(sel, obj.(*Namespace).Labels)
	}
	inf.Lock()
	defer inf.Unlock()
	items := make([]interface{}, 0)
	for _, obj := range inf.items {
		if filterFunc(obj) {
			items = append(items, obj)
		}
	}
	handlerID := atomic.AddUint64(&wf.handlerCounter, 1)
	return inf.addHandler(handlerID, filterFunc, funcs, items)
}

func (wf *WatchFactory) AddFilteredPodHandler(namespace string, sel map[string]string, funcs ResourceEventHandler) *Handler {
	return wf.addHandler("pod", namespace, sel, funcs)
}

func (wf *WatchFactory) AddFilteredNamespaceHandler(namespace string, sel map[string]string, funcs ResourceEventHandler) *Handler {
	return wf.addHandler("namespace", namespace, sel, funcs)
}

func (wf *WatchFactory) RemovePodHandler(handler *Handler) {
	inf := wf.informers["pod"]
	inf.Lock()
	defer inf.Unlock()
	delete(inf.handlers, handler.id)
}

type namespacePolicy struct {
	sync.Mutex
	name, namespace string
	podHandlerList  []*Handler
	nsHandlerList   []*Handler
	deleted         bool
}

type Controller struct {
	watchFactory *WatchFactory
	addressSets  map[string][]string
}

func (oc *Controller) handlePeerPodSelectorAddUpdate(np *namespacePolicy, addressMap map[string]bool, addressSet string, obj interface{}) {
	pod := obj.(*Pod)
	if addressMap[pod.IP] {
		return
	}

	np.Lock()
	defer np.Unlock()
	if np.deleted {
		return
	}
	addressMap[pod.IP] = true
	addresses := make([]string, 0, len(addressMap))
	for k := range addressMap {
		addresses = append(addresses, k)
	}
	oc.addressSets[addressSet] = addresses // oc.setAddressSet: ovn-nbctl set address_set
}

func (oc *Controller) handlePeerNamespaceAndPodSelector(namespaceSelector, podSelector map[string]string, addressSet string, addressMap map[string]bool, np *namespacePolicy) {
	namespaceHandler := oc.watchFactory.AddFilteredNamespaceHandler("", namespaceSelector, ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) {
			namespace := obj.(*Namespace)
			np.Lock()
			defer np.Unlock()
			if np.deleted {
				return
			}
			podHandler := oc.watchFactory.AddFilteredPodHandler(namespace.Name, podSelector, ResourceEventHandlerFuncs{
				AddFunc: func(obj interface{}) {
					oc.handlePeerPodSelectorAddUpdate(np, addressMap, addressSet, obj)
				},
			})
			np.podHandlerList = append(np.podHandlerList, podHandler)
		},
	})
	np.nsHandlerList = append(np.nsHandlerList, namespaceHandler)
}

func main() {
	ns := &Namespace{Name: "backend", Labels: map[string]string{"team": "db"}}
	pod := &Pod{Namespace: "backend", Name: "pg-0", IP: "10.128.0.7", Labels: map[string]string{"app": "postgres"}}
	wf := &WatchFactory{informers: map[string]*informer{
		"namespace": {handlers: map[uint64]*Handler{}, items: []interface{}{ns}},
		"pod":       {handlers: map[uint64]*Handler{}, items: []interface{}{pod}},
	}}
	oc := &Controller{watchFactory: wf, addressSets: map[string][]string{}}
	np := &namespacePolicy{name: "allow-db", namespace: "frontend"}

	// addNetworkPolicy: an ingress rule "from: namespaceSelector{team=db} + podSelector{app=postgres}".
	oc.handlePeerNamespaceAndPodSelector(map[string]string{"team": "db"}, map[string]string{"app": "postgres"},
		"a1234567890", map[string]bool{}, np)
	fmt.Println("policy added; peer address set:", oc.addressSets["a1234567890"])
}
