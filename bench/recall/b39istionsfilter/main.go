// istio/istio, pkg/kube/namespace/filter.go (discoveryNamespacesFilter: the
// namespace informer's UpdateFunc, notifyHandlersLocked, Filter) with the
// ingress controller's selected-namespace handler and kclient's filtered
// List. Reported as istio/istio#52426, fixed by PR #52425 "Fix a deadlock
// when using discoverySelectors" (backported to 1.22/1.23 as #52428).
//
// With discoverySelectors configured, a namespace whose labels change so that
// it becomes (de)selected makes the namespace informer's UpdateFunc take the
// filter's write lock (line 94) and, still holding it, call every handler
// registered with AddHandler (notifyHandlersLocked). The ingress controller's
// handler re-lists the ingresses of the newly selected namespace through its
// kclient, and the filtered informer client checks each object with the
// DynamicObjectFilter interface's Filter, which read-locks the same
// discoveryNamespacesFilter.lock (line 127). The informer goroutine blocks on
// itself and no namespace event is processed again. The fix updates the
// membership under the lock, drops it, and calls the handlers (copied under a
// read lock) without holding it.
package main

import (
	"fmt"
	"sort"
	"sync"
)

type ObjectMeta struct {
	Name      string
	Namespace string
	Labels    map[string]string
}

type Namespace struct{ ObjectMeta }

type Ingress struct {
	ObjectMeta
	Host string
}

type Set map[string]struct{}

func NewSet(items ...string) Set {
	s := Set{}
	for _, i := range items {
		s[i] = struct{}{}
	}
	return s
}

func (s Set) Contains(i string) bool { _, ok := s[i]; return ok }

type Selector map[string]string

func (sel Selector) Matches(l map[string]string) bool {
	for k, v := range sel {
		if l[k] != v {
			return false
		}
	}
	return true
}

// DynamicObjectFilter is kubetypes.DynamicObjectFilter.
type DynamicObjectFilter interface {
	Filter(obj any) bool
	AddHandler(func(selected, deselected Set))
}

// EventHandler is controllers.EventHandler[*corev1.Namespace].
type EventHandler struct {
	AddFunc    func(ns *Namespace)
	UpdateFunc func(oldObj, newObj *Namespace)
}

type discoveryNamespacesFilter struct {
	lock                sync.RWMutex
	discoveryNamespaces Set
	discoverySelectors  []Selector
	handlers            []func(added, removed Set)
}

func NewDiscoveryNamespacesFilter(selectors []Selector, nsHandlers *[]EventHandler) DynamicObjectFilter {
	f := &discoveryNamespacesFilter{discoveryNamespaces: NewSet(), discoverySelectors: selectors}
	*nsHandlers = append(*nsHandlers, EventHandler{
		AddFunc: func(ns *Namespace) {
			f.lock.Lock()
			defer f.lock.Unlock()
			// In rare cases, a namespace may be created after objects in the namespace, because there is no synchronization between watches
			// So we need to notify if we started selecting namespace
			if f.namespaceCreatedLocked(ns.ObjectMeta) {
				f.notifyHandlersLocked(NewSet(ns.Name), nil)
			}
		},
		UpdateFunc: func(oldObj, newObj *Namespace) {
			f.lock.Lock()
			defer f.lock.Unlock()
			membershipChanged, namespaceAdded := f.namespaceUpdatedLocked(oldObj.ObjectMeta, newObj.ObjectMeta)
			if membershipChanged {
				added := NewSet(newObj.Name)
				var removed Set
				if !namespaceAdded {
					removed = added
					added = nil
				}
				f.notifyHandlersLocked(added, removed)
			}
		},
	})
	return f
}

func (d *discoveryNamespacesFilter) notifyHandlersLocked(added Set, removed Set) {
	for _, h := range d.handlers {
		h(added, removed)
	}
}

func (d *discoveryNamespacesFilter) Filter(obj any) bool {
	ns, ok := extractObjectNamespace(obj)
	if !ok {
		return false
	}
	if ns == "" {
		// Cluster scoped resources. Always included
		return true
	}

	d.lock.RLock()
	defer d.lock.RUnlock()
	// permit all objects if discovery selectors are not specified
	if len(d.discoverySelectors) == 0 {
		return true
	}
	// permit if object resides in a namespace labeled for discovery
	return d.discoveryNamespaces.Contains(ns)
}

func extractObjectNamespace(obj any) (string, bool) {
	switch o := obj.(type) {
	case string:
		return o, true
	case *Namespace:
		return o.Name, true
	case *Ingress:
		return o.Namespace, true
	}
	return "", false
}

func (d *discoveryNamespacesFilter) namespaceCreatedLocked(ns ObjectMeta) bool {
	if d.isSelectedLocked(ns.Labels) {
		d.discoveryNamespaces[ns.Name] = struct{}{}
		return len(d.discoverySelectors) != 0
	}
	return false
}

func (d *discoveryNamespacesFilter) namespaceUpdatedLocked(oldNs, newNs ObjectMeta) (membershipChanged bool, namespaceAdded bool) {
	if d.discoveryNamespaces.Contains(oldNs.Name) && !d.isSelectedLocked(newNs.Labels) {
		delete(d.discoveryNamespaces, oldNs.Name)
		return true, false
	}
	if !d.discoveryNamespaces.Contains(oldNs.Name) && d.isSelectedLocked(newNs.Labels) {
		d.discoveryNamespaces[oldNs.Name] = struct{}{}
		return true, true
	}
	return false, false
}

// AddHandler registers a handler on namespace, which will be triggered when namespace selected or deselected.
func (d *discoveryNamespacesFilter) AddHandler(f func(added, removed Set)) {
	d.lock.Lock()
	defer d.lock.Unlock()
	d.handlers = append(d.handlers, f)
}

func (d *discoveryNamespacesFilter) isSelectedLocked(labels map[string]string) bool {
	if len(d.discoverySelectors) == 0 {
		return true
	}
	for _, selector := range d.discoverySelectors {
		if selector.Matches(labels) {
			return true
		}
	}
	return false
}

// informerClient is kclient's filtered client: List applies the object filter.
type informerClient struct {
	store  map[string][]*Ingress
	filter DynamicObjectFilter
}

func (n *informerClient) List(namespace string) []*Ingress {
	var res []*Ingress
	for _, obj := range n.store[namespace] {
		if n.applyFilter(obj) {
			res = append(res, obj)
		}
	}
	return res
}

func (n *informerClient) applyFilter(obj any) bool {
	if n.filter == nil {
		return true
	}
	return n.filter.Filter(obj)
}

// ingress controller (pilot/pkg/config/kube/ingress).
type controller struct {
	ingresses *informerClient
	pushed    []string
}

func NewIngressController(ingresses *informerClient, filter DynamicObjectFilter) *controller {
	c := &controller{ingresses: ingresses}
	filter.AddHandler(c.handleSelectedNamespace)
	return c
}

func (c *controller) handleSelectedNamespace(added, removed Set) {
	names := make([]string, 0, len(added))
	for ns := range added {
		names = append(names, ns)
	}
	sort.Strings(names)
	for _, ns := range names {
		for _, ing := range c.ingresses.List(ns) {
			c.onEvent(ing)
		}
	}
}

func (c *controller) onEvent(ing *Ingress) { c.pushed = append(c.pushed, ing.Namespace+"/"+ing.Name) }

func main() {
	var nsHandlers []EventHandler
	filter := NewDiscoveryNamespacesFilter([]Selector{{"istio-discovery": "enabled"}}, &nsHandlers)
	ingresses := &informerClient{
		store:  map[string][]*Ingress{"shop": {{ObjectMeta: ObjectMeta{Name: "web", Namespace: "shop"}, Host: "shop.example.com"}}},
		filter: filter,
	}
	c := NewIngressController(ingresses, filter)

	oldNs := &Namespace{ObjectMeta{Name: "shop"}}
	newNs := &Namespace{ObjectMeta{Name: "shop", Labels: map[string]string{"istio-discovery": "enabled"}}}
	done := make(chan struct{})
	go func() { // the namespace informer delivers the relabel event
		for _, h := range nsHandlers {
			h.UpdateFunc(oldNs, newNs)
		}
		close(done)
	}()
	<-done
	fmt.Println("pushed:", c.pushed)
}
