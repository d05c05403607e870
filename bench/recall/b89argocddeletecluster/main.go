// Project: argoproj/argo-cd (controller/cache/cache.go liveStateCache.handleDeleteEvent/getSyncedCluster) with argoproj/gitops-engine (pkg/cache/cluster.go clusterCache.Invalidate/EnsureSynced/sync/newResource), v2.5-v2.8, July 2023.
// Bug: handleDeleteEvent, run when a cluster secret is deleted, held the liveStateCache write lock while calling clusterCache.Invalidate, which takes the cluster cache lock. A concurrent EnsureSynced holds the cluster cache lock while sync builds every resource through the populateResourceInfoHandler installed by the controller, and that handler read-locks the liveStateCache, so the controller deadlocks AB-BA when a cluster is removed and re-added (PR #14780: read the cluster under RLock, call Invalidate without the lock, then lock again to delete it). Simplification: sync lists the APIs sequentially here instead of through kube.RunAllAsync.
package main

import (
	"fmt"
	"sync"
	"time"
)

type Unstructured struct{ Kind, Name string }

type Resource struct {
	Ref  string
	Info interface{}
}

// OnPopulateResourceInfoHandler is set by Argo CD on every cluster cache.
type OnPopulateResourceInfoHandler func(un *Unstructured, isRoot bool) (info interface{}, cacheManifest bool)

// clusterCache is gitops-engine's pkg/cache.clusterCache.
type clusterCache struct {
	lock       sync.RWMutex
	resources  map[string]*Resource
	listFn     func() []*Unstructured
	syncStatus struct {
		lock     sync.Mutex
		syncTime *time.Time
	}
	populateResourceInfoHandler OnPopulateResourceInfoHandler
}

func (c *clusterCache) newResource(un *Unstructured) *Resource {
	var info interface{}
	if c.populateResourceInfoHandler != nil {
		info, _ = c.populateResourceInfoHandler(un, true)
	}
	return &Resource{Ref: un.Kind + "/" + un.Name, Info: info}
}

func (c *clusterCache) setNode(n *Resource) { c.resources[n.Ref] = n }

// sync must be called with c.lock held.
func (c *clusterCache) sync() error {
	c.resources = map[string]*Resource{}
	for _, un := range c.listFn() {
		time.Sleep(20 * time.Millisecond) // paging through the API server
		c.setNode(c.newResource(un))
	}
	now := time.Now()
	c.syncStatus.lock.Lock()
	c.syncStatus.syncTime = &now
	c.syncStatus.lock.Unlock()
	return nil
}

func (c *clusterCache) EnsureSynced() error {
	c.syncStatus.lock.Lock()
	synced := c.syncStatus.syncTime != nil
	c.syncStatus.lock.Unlock()
	if synced {
		return nil
	}
	c.lock.Lock()
	defer c.lock.Unlock()
	return c.sync()
}

func (c *clusterCache) Invalidate() {
	c.lock.Lock()
	defer c.lock.Unlock()
	c.syncStatus.lock.Lock()
	c.syncStatus.syncTime = nil
	c.syncStatus.lock.Unlock()
	c.resources = nil
}

type cacheSettings struct{ ignoreResourceUpdates bool }

type ResourceInfo struct {
	Images   []string
	Settings bool
}

// liveStateCache is Argo CD's controller/cache.liveStateCache.
type liveStateCache struct {
	lock          sync.RWMutex
	clusters      map[string]*clusterCache
	cacheSettings *cacheSettings
	lister        func(server string) func() []*Unstructured
}

func (c *liveStateCache) getCluster(server string) *clusterCache {
	c.lock.RLock()
	cc, ok := c.clusters[server]
	c.lock.RUnlock()
	if ok {
		return cc
	}
	c.lock.Lock()
	defer c.lock.Unlock()
	cc = &clusterCache{listFn: c.lister(server)}
	cc.populateResourceInfoHandler = func(un *Unstructured, isRoot bool) (interface{}, bool) {
		c.lock.RLock()
		cacheSettings := c.cacheSettings
		c.lock.RUnlock()
		return &ResourceInfo{Images: []string{un.Name + ":latest"}, Settings: cacheSettings.ignoreResourceUpdates}, isRoot
	}
	c.clusters[server] = cc
	return cc
}

func (c *liveStateCache) getSyncedCluster(server string) (*clusterCache, error) {
	cc := c.getCluster(server)
	if err := cc.EnsureSynced(); err != nil {
		return nil, err
	}
	return cc, nil
}

// handleDeleteEvent is called by the cluster secret informer.
func (c *liveStateCache) handleDeleteEvent(clusterServer string) {
	c.lock.Lock()
	defer c.lock.Unlock()
	cluster, ok := c.clusters[clusterServer]
	if ok {
		cluster.Invalidate()
		delete(c.clusters, clusterServer)
	}
}

func main() {
	const server = "https://prod.example.com"
	live := &liveStateCache{clusters: map[string]*clusterCache{}, cacheSettings: &cacheSettings{},
		lister: func(string) func() []*Unstructured {
			return func() []*Unstructured {
				return []*Unstructured{{"Deployment", "guestbook"}, {"Service", "guestbook"}, {"ConfigMap", "cfg"}}
			}
		}}
	live.getCluster(server) // cluster was added before

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // app refresh: ApplicationController -> liveStateCache.GetManagedLiveObjs
		defer wg.Done()
		cc, err := live.getSyncedCluster(server)
		if err == nil {
			cc.lock.RLock()
			fmt.Println("synced resources:", len(cc.resources))
			cc.lock.RUnlock()
		}
	}()
	go func() { // cluster secret deleted: argocd cluster rm
		defer wg.Done()
		time.Sleep(30 * time.Millisecond)
		live.handleDeleteEvent(server)
		fmt.Println("cluster removed from cache")
	}()
	wg.Wait()
}
