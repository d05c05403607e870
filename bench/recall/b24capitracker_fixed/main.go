// Project: kubernetes-sigs/cluster-api (controllers/remote/cluster_cache_tracker.go, keyedmutex.go)
// Bug: getClusterAccessor takes the per-cluster lock from the keyedMutex, and when
// newClusterAccessor fails (kubeconfig secret not found yet) it returns the error
// without unlocking; the next reconcile of the same Cluster blocks forever in
// clusterLock.Lock.
// Fix: defer t.clusterLock.Unlock(cluster) right after acquiring it.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"time"
)

type ObjectKey struct {
	Namespace, Name string
}

func (k ObjectKey) String() string { return k.Namespace + "/" + k.Name }

type keyedMutex struct {
	locksMtx sync.Mutex
	locks    map[ObjectKey]*sync.Mutex
}

func newKeyedMutex() *keyedMutex {
	return &keyedMutex{locks: map[ObjectKey]*sync.Mutex{}}
}

func (k *keyedMutex) Lock(key ObjectKey) {
	k.locksMtx.Lock()
	l, ok := k.locks[key]
	if !ok {
		l = &sync.Mutex{}
		k.locks[key] = l
	}
	k.locksMtx.Unlock()
	l.Lock()
}

func (k *keyedMutex) Unlock(key ObjectKey) {
	k.locksMtx.Lock()
	defer k.locksMtx.Unlock()
	if l, ok := k.locks[key]; ok {
		l.Unlock()
	}
}

type Client interface {
	Get(ctx context.Context, key ObjectKey, kind string) (map[string]string, error)
}

type fakeClient struct {
	mu      sync.Mutex
	secrets map[ObjectKey]map[string]string
}

func (c *fakeClient) Get(_ context.Context, key ObjectKey, kind string) (map[string]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.secrets[key]
	if !ok {
		return nil, fmt.Errorf("%s %q not found", kind, key)
	}
	return s, nil
}

type clusterAccessor struct {
	cluster   ObjectKey
	host      string
	client    Client
	createdAt time.Time
	stop      chan struct{}
}

type ClusterCacheTrackerOptions struct {
	ClientUncachedObjects []string
	Indexes               []string
	ControllerName        string
}

type ClusterCacheTracker struct {
	client               Client
	clusterAccessorsLock sync.RWMutex
	clusterAccessors     map[ObjectKey]*clusterAccessor
	clusterLock          *keyedMutex
	options              ClusterCacheTrackerOptions
}

func NewClusterCacheTracker(c Client, opts ClusterCacheTrackerOptions) (*ClusterCacheTracker, error) {
	if opts.ControllerName == "" {
		return nil, errors.New("controller name is required")
	}
	return &ClusterCacheTracker{
		client:           c,
		clusterAccessors: map[ObjectKey]*clusterAccessor{},
		clusterLock:      newKeyedMutex(),
		options:          opts,
	}, nil
}

func (t *ClusterCacheTracker) loadAccessor(cluster ObjectKey) (*clusterAccessor, bool) {
	t.clusterAccessorsLock.RLock()
	defer t.clusterAccessorsLock.RUnlock()
	a, ok := t.clusterAccessors[cluster]
	return a, ok
}

func (t *ClusterCacheTracker) storeAccessor(cluster ObjectKey, a *clusterAccessor) {
	t.clusterAccessorsLock.Lock()
	defer t.clusterAccessorsLock.Unlock()
	t.clusterAccessors[cluster] = a
}

func (t *ClusterCacheTracker) newClusterAccessor(ctx context.Context, cluster ObjectKey) (*clusterAccessor, error) {
	secretKey := ObjectKey{Namespace: cluster.Namespace, Name: cluster.Name + "-kubeconfig"}
	kubeconfig, err := t.client.Get(ctx, secretKey, "Secret")
	if err != nil {
		return nil, fmt.Errorf("error fetching REST client config for remote cluster %q: %w", cluster, err)
	}
	return &clusterAccessor{cluster: cluster, host: kubeconfig["server"], client: t.client, createdAt: time.Now(), stop: make(chan struct{})}, nil
}

func (t *ClusterCacheTracker) getClusterAccessor(ctx context.Context, cluster ObjectKey) (*clusterAccessor, error) {
	if a, ok := t.loadAccessor(cluster); ok {
		return a, nil
	}
	t.clusterLock.Lock(cluster)
	defer t.clusterLock.Unlock(cluster)
	if a, ok := t.loadAccessor(cluster); ok {
		return a, nil
	}
	a, err := t.newClusterAccessor(ctx, cluster)
	if err != nil {
		return nil, fmt.Errorf("failed to create cluster accessor: %w", err)
	}
	t.storeAccessor(cluster, a)
	return a, nil
}

func (t *ClusterCacheTracker) GetClient(ctx context.Context, cluster ObjectKey) (Client, error) {
	a, err := t.getClusterAccessor(ctx, cluster)
	if err != nil {
		return nil, err
	}
	return a.client, nil
}

func main() {
	ctx := context.Background()
	c := &fakeClient{secrets: map[ObjectKey]map[string]string{}}
	tracker, err := NewClusterCacheTracker(c, ClusterCacheTrackerOptions{ControllerName: "machine-controller"})
	if err != nil {
		log.Fatal(err)
	}
	cluster := ObjectKey{Namespace: "default", Name: "workload-1"}
	for attempt := 1; attempt <= 2; attempt++ {
		if _, err := tracker.GetClient(ctx, cluster); err != nil {
			log.Printf("reconcile %d of %v: %v, requeueing", attempt, cluster, err)
			c.mu.Lock()
			c.secrets[ObjectKey{Namespace: "default", Name: "workload-1-kubeconfig"}] = map[string]string{"server": "https://10.0.0.1:6443"}
			c.mu.Unlock()
			continue
		}
		a, _ := tracker.loadAccessor(cluster)
		fmt.Printf("reconcile %d: connected to %v at %s\n", attempt, cluster, a.host)
	}
}
