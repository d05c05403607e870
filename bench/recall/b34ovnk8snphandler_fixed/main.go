// Project: ovn-kubernetes (go-controller/pkg/factory/factory.go, go-controller/pkg/ovn/policy_old.go), 2018
// Issue: ovn-org/ovn-kubernetes PR #483 "factory: defer handler removal to a goroutine"
// Fixed twin of b34ovnk8snphandler, with the fix of PR #483: removing a handler marks it dead with an atomic
// tombstone (dead handlers are no longer called) and deletes it from the informer's map from a separate
// goroutine, so deleteNetworkPolicyOld no longer waits for the informer mutex while holding np.Lock.
package main

import (
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
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

const (
	handlerAlive uint32 = 0
	handlerDead  uint32 = 1
)

type Handler struct {
	FilterFunc func(obj interface{}) bool
	Funcs      ResourceEventHandlerFuncs
	id         uint64
	// tombstone is used to track the handler's lifetime. handlerAlive
	// indicates the handler can be called, while handlerDead indicates
	// it has been scheduled for removal and should not be called.
	tombstone uint32
}

func (h *Handler) OnDelete(obj interface{}) {
	if atomic.LoadUint32(&h.tombstone) == handlerAlive && h.FilterFunc(obj) && h.Funcs.DeleteFunc != nil {
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
	if !atomic.CompareAndSwapUint32(&handler.tombstone, handlerAlive, handlerDead) {
		return fmt.Errorf("tried to remove already removed object type %v event handler %d", i.oType, handler.id)
	}

	go func() {
		i.Lock()
		defer i.Unlock()
		if _, ok := i.handlers[handler.id]; ok {
			// Remove the handler
			delete(i.handlers, handler.id)
			fmt.Printf("removed %v event handler %d\n", i.oType, handler.id)
		} else {
			fmt.Printf("tried to remove unknown object type %v event handler %d\n", i.oType, handler.id)
		}
	}()
	return nil
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
