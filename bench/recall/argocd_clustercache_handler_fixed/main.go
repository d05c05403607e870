// Project: Argo CD (gitops-engine pkg/cache used by argo-cd controller/cache).
// Bug (as remembered): clusterCache.processEvent holds c.lock (write) while it
// updates the resource tree and then loops over every registered
// OnResourceUpdated handler. Argo CD's liveStateCache handler looked up the
// owning application by walking the hierarchy through the public cache API
// (IterateHierarchy / FindResources), which takes c.lock.RLock() again on the
// same goroutine -> the watch-event goroutine hung and the app controller
// stopped refreshing. The fix was to make handlers use the namespaceResources
// map passed to them (handlers must not call back into the cache).
package main

import (
	"fmt"
	"sync"
	"time"
)

type ResourceKey struct{ Namespace, Name string }

type Resource struct {
	Ref       ResourceKey
	OwnerRefs []ResourceKey
	AppName   string
}

type OnResourceUpdatedHandler func(newRes *Resource, oldRes *Resource, namespaceResources map[ResourceKey]*Resource)

type Unsubscribe func()

type event struct {
	key   ResourceKey
	owner *ResourceKey
	app   string
}

type clusterCache struct {
	lock                    sync.RWMutex
	resources               map[ResourceKey]*Resource
	nsIndex                 map[string]map[ResourceKey]*Resource
	handlersLock            sync.Mutex
	handlerKey              uint64
	resourceUpdatedHandlers map[uint64]OnResourceUpdatedHandler
}

func NewClusterCache() *clusterCache {
	return &clusterCache{
		resources:               map[ResourceKey]*Resource{},
		nsIndex:                 map[string]map[ResourceKey]*Resource{},
		resourceUpdatedHandlers: map[uint64]OnResourceUpdatedHandler{},
	}
}

func (c *clusterCache) OnResourceUpdated(handler OnResourceUpdatedHandler) Unsubscribe {
	c.handlersLock.Lock()
	defer c.handlersLock.Unlock()
	key := c.handlerKey
	c.handlerKey++
	c.resourceUpdatedHandlers[key] = handler
	return func() {
		c.handlersLock.Lock()
		defer c.handlersLock.Unlock()
		delete(c.resourceUpdatedHandlers, key)
	}
}

func (c *clusterCache) getResourceUpdatedHandlers() []OnResourceUpdatedHandler {
	c.handlersLock.Lock()
	defer c.handlersLock.Unlock()
	var handlers []OnResourceUpdatedHandler
	for _, h := range c.resourceUpdatedHandlers {
		handlers = append(handlers, h)
	}
	return handlers
}

// IterateHierarchy walks from key up through owner references.
func (c *clusterCache) IterateHierarchy(key ResourceKey, action func(res *Resource) bool) {
	c.lock.RLock()
	defer c.lock.RUnlock()
	iterateUp(c.resources, key, action)
}

func iterateUp(resources map[ResourceKey]*Resource, key ResourceKey, action func(res *Resource) bool) {
	for res, ok := resources[key]; ok; {
		if !action(res) || len(res.OwnerRefs) == 0 {
			return
		}
		res, ok = resources[res.OwnerRefs[0]]
	}
}

func (c *clusterCache) setNode(n *Resource) {
	c.resources[n.Ref] = n
	ns, ok := c.nsIndex[n.Ref.Namespace]
	if !ok {
		ns = map[ResourceKey]*Resource{}
		c.nsIndex[n.Ref.Namespace] = ns
	}
	ns[n.Ref] = n
}

func (c *clusterCache) onNodeUpdated(oldRes, newRes *Resource) {
	c.setNode(newRes)
	for _, h := range c.getResourceUpdatedHandlers() {
		h(newRes, oldRes, c.nsIndex[newRes.Ref.Namespace])
	}
}

func (c *clusterCache) processEvent(ev event) {
	c.lock.Lock()
	defer c.lock.Unlock()
	newRes := &Resource{Ref: ev.key, AppName: ev.app}
	if ev.owner != nil {
		newRes.OwnerRefs = []ResourceKey{*ev.owner}
	}
	c.onNodeUpdated(c.resources[ev.key], newRes)
}

func (c *clusterCache) watchEvents(events <-chan event) {
	for ev := range events {
		c.processEvent(ev)
	}
}

// ---- argo-cd controller/cache/cache.go ----

type liveStateCache struct {
	cluster    *clusterCache
	appUpdated func(appName string)
}

func (c *liveStateCache) onResourceUpdated(newRes *Resource, oldRes *Resource, namespaceResources map[ResourceKey]*Resource) {
	var appName string
	// Fix: handlers run under the cache lock, so walk the namespaceResources
	// snapshot handed to us instead of calling back into the cluster cache.
	resources := map[ResourceKey]*Resource{newRes.Ref: newRes}
	for k, v := range namespaceResources {
		resources[k] = v
	}
	iterateUp(resources, newRes.Ref, func(r *Resource) bool {
		if r.AppName != "" {
			appName = r.AppName
			return false
		}
		return true
	})
	if appName != "" {
		c.appUpdated(appName)
	}
}

func main() {
	cluster := NewClusterCache()
	live := &liveStateCache{cluster: cluster, appUpdated: func(app string) { fmt.Println("refresh", app) }}
	unsub := cluster.OnResourceUpdated(live.onResourceUpdated)
	defer unsub()
	cluster.OnResourceUpdated(func(newRes, oldRes *Resource, _ map[ResourceKey]*Resource) {
		fmt.Println("metrics: updated", newRes.Ref.Name)
	})

	events := make(chan event, 4)
	go cluster.watchEvents(events)
	deploy := ResourceKey{"default", "guestbook"}
	events <- event{key: deploy, app: "guestbook-app"}
	events <- event{key: ResourceKey{"default", "guestbook-rs"}, owner: &deploy}
	time.Sleep(100 * time.Millisecond)
}
