// Project: ovn-kubernetes (go-controller/pkg/factory/factory.go, go-controller/pkg/ovn/policy_old.go), 2018
// Issue: ovn-org/ovn-kubernetes PR #483 "factory: defer handler removal to a goroutine"
// The watch factory's informer delivers every event to its registered handlers while holding the informer
// mutex (forEachHandler, line 55). A NetworkPolicy registers a pod handler whose delete callback
// takes the policy's namespacePolicy mutex (line 145). Deleting the NetworkPolicy takes np.Lock
// (line 198), cleans up the OVN address sets and port group through ovn-nbctl, and then removes its pod
// handlers (line 185), which needs the informer mutex (line 77). A pod deletion arriving
// while the policy is being deleted therefore holds informer.Lock and waits for np.Lock, while the policy
// deletion holds np.Lock and waits for informer.Lock: the master stops processing both pod and policy events.
// main deletes the policy and, while its ovn-nbctl calls run, deletes one of the policy's pods.
// The fix tombstones the handler and does the map removal from a separate goroutine.
package main

import (
	"fmt"
	"reflect"
	"sync"
	"time"
)

type Pod struct {
	Name, Namespace string
	Labels          map[string]string
}

type NetworkPolicy struct {
	Name, Namespace string
	PodSelector     map[string]string
}

type ResourceEventHandlerFuncs struct {
	AddFunc    func(obj interface{})
	DeleteFunc func(obj interface{})
}

type Handler struct {
	FilterFunc func(obj interface{}) bool
	Funcs      ResourceEventHandlerFuncs
	id         uint64
}

func (h *Handler) OnDelete(obj interface{}) {
	if h.FilterFunc(obj) && h.Funcs.DeleteFunc != nil {
		h.Funcs.DeleteFunc(obj)
	}
}

type informer struct {
	sync.Mutex
	oType    reflect.Type
	handlers map[uint64]*Handler
}

func (i *informer) forEachHandler(obj interface{}, f func(h *Handler)) {
	i.Lock()
	defer i.Unlock()

	objType := reflect.TypeOf(obj)
	if objType != i.oType {
		fmt.Printf("object type %v did not match expected %v\n", objType, i.oType)
		return
	}
	for _, handler := range i.handlers {
		f(handler)
	}
}

func (i *informer) addHandler(id uint64, filterFunc func(obj interface{}) bool, funcs ResourceEventHandlerFuncs) *Handler {
	i.Lock()
	defer i.Unlock()
	handler := &Handler{FilterFunc: filterFunc, Funcs: funcs, id: id}
	i.handlers[id] = handler
	return handler
}

func (i *informer) removeHandler(handler *Handler) error {
	i.Lock()
	defer i.Unlock()
	if _, ok := i.handlers[handler.id]; ok {
		delete(i.handlers, handler.id)
		fmt.Printf("removed %v event handler %d\n", i.oType, handler.id)
		return nil
	}
	return fmt.Errorf("tried to remove unknown object type %v event handler %d", i.oType, handler.id)
}

// DeleteFunc of the shared pod informer: fan out to the factory's handlers.
func (i *informer) onDelete(obj interface{}) {
	i.forEachHandler(obj, func(h *Handler) { h.OnDelete(obj) })
}

type WatchFactory struct {
	handlerCounter uint64
	informers      map[reflect.Type]*informer
}

var podType = reflect.TypeOf(&Pod{})

func (wf *WatchFactory) AddFilteredPodHandler(namespace string, sel map[string]string, funcs ResourceEventHandlerFuncs) *Handler {
	wf.handlerCounter++
	filter := func(obj interface{}) bool {
		pod := obj.(*Pod)
		if pod.Namespace != namespace {
			return false
		}
		for k, v := range sel {
			if pod.Labels[k] != v {
				return false
			}
		}
		return true
	}
	return wf.informers[podType].addHandler(wf.handlerCounter, filter, funcs)
}

func (wf *WatchFactory) RemovePodHandler(handler *Handler) error {
	return wf.informers[podType].removeHandler(handler)
}

type namespacePolicy struct {
	sync.Mutex
	name           string
	namespace      string
	podHandlerList []*Handler
	localPods      map[string]bool
	portGroupName  string
	deleted        bool
}

type Controller struct {
	watchFactory      *WatchFactory
	lspMutex          sync.Mutex
	namespacePolicies map[string]map[string]*namespacePolicy
}

// RunOVNNbctl execs ovn-nbctl against the northbound database.
func RunOVNNbctl(args ...string) {
	time.Sleep(100 * time.Millisecond)
	fmt.Println("ovn-nbctl", args)
}

func (oc *Controller) handleLocalPodSelectorDelFuncOld(policy *NetworkPolicy, np *namespacePolicy, obj interface{}) {
	pod := obj.(*Pod)

	np.Lock()
	defer np.Unlock()

	if np.deleted {
		return
	}
	logicalPort := fmt.Sprintf("%s_%s", pod.Namespace, pod.Name)
	if !np.localPods[logicalPort] {
		return
	}
	RunOVNNbctl("--if-exists", "remove", "port_group", np.portGroupName, "ports", logicalPort)
	delete(np.localPods, logicalPort)
}

func (oc *Controller) handleLocalPodSelectorOld(policy *NetworkPolicy, np *namespacePolicy) {
	h := oc.watchFactory.AddFilteredPodHandler(policy.Namespace, policy.PodSelector,
		ResourceEventHandlerFuncs{
			DeleteFunc: func(obj interface{}) {
				oc.handleLocalPodSelectorDelFuncOld(policy, np, obj)
			},
		})
	np.podHandlerList = append(np.podHandlerList, h)
}

func (oc *Controller) addNetworkPolicyOld(policy *NetworkPolicy) {
	np := &namespacePolicy{name: policy.Name, namespace: policy.Namespace, localPods: make(map[string]bool),
		portGroupName: policy.Namespace + "_" + policy.Name}
	np.localPods[policy.Namespace+"_web-0"] = true
	oc.handleLocalPodSelectorOld(policy, np)

	oc.lspMutex.Lock()
	if oc.namespacePolicies[policy.Namespace] == nil {
		oc.namespacePolicies[policy.Namespace] = make(map[string]*namespacePolicy)
	}
	oc.namespacePolicies[policy.Namespace][policy.Name] = np
	oc.lspMutex.Unlock()
}

func (oc *Controller) shutdownHandlers(np *namespacePolicy) {
	for _, handler := range np.podHandlerList {
		_ = oc.watchFactory.RemovePodHandler(handler)
	}
}

func (oc *Controller) deleteNetworkPolicyOld(policy *NetworkPolicy) {
	oc.lspMutex.Lock()
	np := oc.namespacePolicies[policy.Namespace][policy.Name]
	delete(oc.namespacePolicies[policy.Namespace], policy.Name)
	oc.lspMutex.Unlock()
	if np == nil {
		return
	}

	np.Lock()
	defer np.Unlock()

	// Mark the policy as deleted.
	np.deleted = true

	// Delete the port group and the ACLs of the policy.
	RunOVNNbctl("--if-exists", "destroy", "port_group", np.portGroupName)

	// We should now stop all the handlers go routines.
	oc.shutdownHandlers(np)
}

func main() {
	wf := &WatchFactory{informers: map[reflect.Type]*informer{
		podType: {oType: podType, handlers: make(map[uint64]*Handler)},
	}}
	oc := &Controller{watchFactory: wf, namespacePolicies: make(map[string]map[string]*namespacePolicy)}

	policy := &NetworkPolicy{Name: "allow-web", Namespace: "shop", PodSelector: map[string]string{"app": "web"}}
	oc.addNetworkPolicyOld(policy)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // NetworkPolicy informer: DeleteFunc
		defer wg.Done()
		oc.deleteNetworkPolicyOld(policy)
	}()
	time.Sleep(30 * time.Millisecond)
	go func() { // Pod informer: DeleteFunc
		defer wg.Done()
		wf.informers[podType].onDelete(&Pod{Name: "web-0", Namespace: "shop", Labels: map[string]string{"app": "web"}})
	}()
	wg.Wait()
	fmt.Println("policy and pod deleted")
}
