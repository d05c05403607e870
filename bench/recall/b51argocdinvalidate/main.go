// Project: Argo CD (argoproj/argo-cd) with its cluster cache from
// argoproj/gitops-engine, v2.6/v2.7 era (2023).
// Files/functions: argo-cd controller/cache/cache.go (liveStateCache.invalidate,
// liveStateCache.getCluster and the populate-resource-info handler it installs);
// gitops-engine pkg/cache/cluster.go (clusterCache.Invalidate,
// clusterCache.processEvent, clusterCache.newResource, onNodeUpdated, setNode,
// SetPopulateResourceInfoHandler).
// Issue: argoproj/argo-cd#11458 (application controller hangs), fixed by
// argoproj/argo-cd PR #13636 "fix: avoid acquiring lock on two mutexes at the
// same time to prevent deadlock".
//
// liveStateCache.invalidate runs when the argocd-cm settings change. It takes
// the live state cache lock (liveStateCache.lock) for writing, stores the new
// settings and, still holding it, calls Invalidate on every cluster cache,
// which takes clusterCache.lock. In the other direction, the cluster cache
// holds clusterCache.lock while it builds a Resource for a watch event
// (processEvent -> newResource) and newResource calls the
// populateResourceInfoHandler that Argo CD installed through an option when it
// created the cluster cache; that handler read-locks liveStateCache.lock to
// read the current cache settings. The two goroutines take the same two locks
// in opposite orders and block forever. The fix copies the cluster map under
// the live state cache lock, releases it, and only then invalidates each
// cluster.
package main

import (
	"fmt"
	"sync"
	"time"
)

// ---- gitops-engine pkg/cache ----

type Unstructured struct {
	Kind, Namespace, Name string
}

type Resource struct {
	Ref  string
	Info interface{}
}

type OnPopulateResourceInfoHandler func(un *Unstructured, isRoot bool) (info interface{}, cacheManifest bool)

type Settings struct{ ResourceHealthOverride map[string]string }

type UpdateSettingsFunc func(cache *clusterCache)

func SetPopulateResourceInfoHandler(handler OnPopulateResourceInfoHandler) UpdateSettingsFunc {
	return func(cache *clusterCache) { cache.populateResourceInfoHandler = handler }
}

func SetSettings(settings Settings) UpdateSettingsFunc {
	return func(cache *clusterCache) { cache.settings = settings }
}

type ClusterCache interface {
	Invalidate(opts ...UpdateSettingsFunc)
}

type clusterCache struct {
	lock      sync.RWMutex
	resources map[string]*Resource
	settings  Settings
	synced    bool

	populateResourceInfoHandler OnPopulateResourceInfoHandler
}

func NewClusterCache(opts ...UpdateSettingsFunc) *clusterCache {
	c := &clusterCache{resources: map[string]*Resource{}}
	for i := range opts {
		opts[i](c)
	}
	return c
}

func (c *clusterCache) Invalidate(opts ...UpdateSettingsFunc) {
	c.lock.Lock()
	defer c.lock.Unlock()
	c.synced = false
	for i := range opts {
		opts[i](c)
	}
}

func (c *clusterCache) newResource(un *Unstructured) *Resource {
	var info interface{}
	if c.populateResourceInfoHandler != nil {
		info, _ = c.populateResourceInfoHandler(un, true)
	}
	return &Resource{Ref: un.Kind + "/" + un.Namespace + "/" + un.Name, Info: info}
}

func (c *clusterCache) setNode(n *Resource) { c.resources[n.Ref] = n }

func (c *clusterCache) onNodeUpdated(oldRes *Resource, newRes *Resource) { c.setNode(newRes) }

// processEvent is called by the watch goroutine for every watch event.
func (c *clusterCache) processEvent(event string, un *Unstructured) {
	c.lock.Lock()
	defer c.lock.Unlock()
	existingNode := c.resources[un.Kind+"/"+un.Namespace+"/"+un.Name]
	c.onNodeUpdated(existingNode, c.newResource(un))
}

// ---- argo-cd controller/cache ----

type cacheSettings struct {
	clusterSettings     Settings
	appInstanceLabelKey string
}

type ResourceInfo struct{ AppName string }

type liveStateCache struct {
	clusters      map[string]ClusterCache
	cacheSettings cacheSettings
	lock          sync.RWMutex
}

func populateNodeInfo(un *Unstructured, res *ResourceInfo) {
	// Parsing the live manifest takes a moment.
	time.Sleep(50 * time.Millisecond)
}

func (c *liveStateCache) getCluster(server string) *clusterCache {
	c.lock.Lock()
	defer c.lock.Unlock()
	clusterCache := NewClusterCache(
		SetSettings(c.cacheSettings.clusterSettings),
		SetPopulateResourceInfoHandler(func(un *Unstructured, isRoot bool) (interface{}, bool) {
			res := &ResourceInfo{}
			populateNodeInfo(un, res)
			c.lock.RLock()
			cacheSettings := c.cacheSettings
			c.lock.RUnlock()
			res.AppName = cacheSettings.appInstanceLabelKey
			return res, res.AppName != ""
		}),
	)
	c.clusters[server] = clusterCache
	return clusterCache
}

func (c *liveStateCache) invalidate(cacheSettings cacheSettings) {
	c.lock.Lock()
	defer c.lock.Unlock()

	c.cacheSettings = cacheSettings
	for _, clust := range c.clusters {
		clust.Invalidate(SetSettings(cacheSettings.clusterSettings))
	}
}

func main() {
	lsc := &liveStateCache{clusters: map[string]ClusterCache{}, cacheSettings: cacheSettings{appInstanceLabelKey: "app.kubernetes.io/instance"}}
	cluster := lsc.getCluster("https://kubernetes.default.svc")

	watchDone := make(chan struct{})
	go func() {
		cluster.processEvent("MODIFIED", &Unstructured{Kind: "Deployment", Namespace: "default", Name: "guestbook"})
		close(watchDone)
	}()

	time.Sleep(10 * time.Millisecond)
	lsc.invalidate(cacheSettings{appInstanceLabelKey: "argocd.argoproj.io/instance"})
	<-watchDone
	fmt.Println("settings applied")
}
