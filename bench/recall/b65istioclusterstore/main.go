// Shape of istio/istio#60316 ("fix multicluster ClusterStore recursive RLock
// deadlock"): ClusterStore.AllReady holds the store's read lock and, for a
// remote cluster that has not synced, calls triggerRecomputeOnSync, which
// takes casMu and then looks the cluster up again with GetByID, read-locking
// the store a second time. A secret update's Store, queued for the write
// lock in between, blocks that second RLock.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type ID string

// Cluster is a remote cluster built from a kubeconfig secret.
type Cluster struct {
	ID          ID
	initialSync atomic.Bool
	syncers     []func() bool // informer HasSynced funcs
	mu          sync.Mutex
	onSynced    []func()
}

func (c *Cluster) HasSynced() bool {
	if c.initialSync.Load() {
		return true
	}
	for _, synced := range c.syncers {
		if !synced() {
			return false
		}
	}
	return true
}

func (c *Cluster) OnSynced(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onSynced = append(c.onSynced, f)
}

type ClusterStore struct {
	sync.RWMutex
	// keyed by secret key, then cluster ID
	remoteClusters map[string]map[ID]*Cluster

	casMu                sync.Mutex
	clustersAwaitingSync map[ID]struct{}
	recompute            func()
}

func newClusterStore(recompute func()) *ClusterStore {
	return &ClusterStore{
		remoteClusters:       map[string]map[ID]*Cluster{},
		clustersAwaitingSync: map[ID]struct{}{},
		recompute:            recompute,
	}
}

func (c *ClusterStore) Store(secretKey string, clusterID ID, value *Cluster) {
	c.Lock()
	defer c.Unlock()
	if _, ok := c.remoteClusters[secretKey]; !ok {
		c.remoteClusters[secretKey] = map[ID]*Cluster{}
	}
	c.remoteClusters[secretKey][clusterID] = value
}

func (c *ClusterStore) GetByID(clusterID ID) *Cluster {
	c.RLock()
	defer c.RUnlock()
	for _, clusters := range c.remoteClusters {
		if cl, ok := clusters[clusterID]; ok {
			return cl
		}
	}
	return nil
}

// AllReady reports whether every remote cluster has synced.
func (c *ClusterStore) AllReady() bool {
	c.RLock()
	defer c.RUnlock()
	for _, clusters := range c.remoteClusters {
		for _, cl := range clusters {
			if !cl.HasSynced() {
				c.triggerRecomputeOnSync(cl.ID)
				return false
			}
		}
	}
	return true
}

func (c *ClusterStore) triggerRecomputeOnSync(id ID) {
	c.casMu.Lock()
	defer c.casMu.Unlock()
	if _, waiting := c.clustersAwaitingSync[id]; waiting {
		return
	}
	cl := c.GetByID(id)
	if cl == nil {
		return
	}
	c.clustersAwaitingSync[id] = struct{}{}
	cl.OnSynced(func() {
		c.casMu.Lock()
		delete(c.clustersAwaitingSync, id)
		c.casMu.Unlock()
		c.recompute()
	})
}

// Controller is the multicluster secret controller.
type Controller struct {
	cs *ClusterStore
}

func (c *Controller) HasSynced() bool { return c.cs.AllReady() }

func (c *Controller) addSecret(secretKey string, kubeconfigs map[ID]string) {
	for id := range kubeconfigs {
		remote := &Cluster{ID: id, syncers: []func() bool{func() bool { return true }}}
		c.cs.Store(secretKey, id, remote)
	}
}

func main() {
	ctrl := &Controller{cs: newClusterStore(func() { fmt.Println("recompute") })}
	slowInformer := func() bool {
		time.Sleep(100 * time.Millisecond) // a remote apiserver that is slow to list
		return false
	}
	ctrl.cs.Store("istio-system/istio-remote-secret-east", "east", &Cluster{ID: "east", syncers: []func() bool{slowInformer}})

	done := make(chan struct{})
	go func() { // a new remote secret is added while istiod reports readiness
		time.Sleep(30 * time.Millisecond)
		ctrl.addSecret("istio-system/istio-remote-secret-west", map[ID]string{"west": "kubeconfig"})
		close(done)
	}()

	ready := ctrl.HasSynced() // readiness probe
	<-done
	fmt.Println("ready:", ready)
}
