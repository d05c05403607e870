// Project: KubeSphere (pkg/utils/clusterclient/clusterclient.go, used by the multi-cluster API proxy), v3.4
// Issue: kubesphere/kubesphere PR #5941 "utils/clusterclient: fix the deadlock issue when getting the cluster client"
// Fixed twin of b34kubesphereinnercluster, with the fix of PR #5941: GetInnerCluster releases the read
// lock on both paths (cache hit and miss) before it falls back to the cluster lister and addCluster, which
// takes the write lock.
package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"
)

type Cluster struct {
	Name                  string
	KubernetesAPIEndpoint string
	KubeSphereAPIEndpoint string
}

// ClusterLister is the informer-backed lister of Cluster objects.
type ClusterLister interface {
	Get(name string) (*Cluster, error)
}

type clusterLister struct {
	mu    sync.Mutex
	items map[string]*Cluster
}

func (l *clusterLister) Get(name string) (*Cluster, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.items[name]; ok {
		return c, nil
	}
	return nil, errors.New(`cluster.cluster.kubesphere.io "` + name + `" not found`)
}

type innerCluster struct {
	KubernetesURL *url.URL
	KubesphereURL *url.URL
	Transport     http.RoundTripper
}

type clusterClients struct {
	sync.RWMutex
	clusterLister ClusterLister

	// build a in memory cluster cache to speed things up
	innerClusters map[string]*innerCluster
}

func NewClusterClient(lister ClusterLister) *clusterClients {
	return &clusterClients{clusterLister: lister, innerClusters: make(map[string]*innerCluster)}
}

func newInnerCluster(cluster *Cluster) *innerCluster {
	kubernetesEndpoint, err := url.Parse(cluster.KubernetesAPIEndpoint)
	if err != nil {
		return nil
	}
	kubesphereEndpoint, err := url.Parse(cluster.KubeSphereAPIEndpoint)
	if err != nil {
		return nil
	}
	return &innerCluster{KubernetesURL: kubernetesEndpoint, KubesphereURL: kubesphereEndpoint, Transport: http.DefaultTransport}
}

func (c *clusterClients) addCluster(obj interface{}) *innerCluster {
	cluster := obj.(*Cluster)
	fmt.Printf("add new cluster %s\n", cluster.Name)
	inner := newInnerCluster(cluster)
	if inner == nil {
		return nil
	}
	c.Lock()
	defer c.Unlock()
	c.innerClusters[cluster.Name] = inner
	return inner
}

func (c *clusterClients) removeCluster(obj interface{}) {
	cluster := obj.(*Cluster)
	fmt.Printf("remove cluster %s\n", cluster.Name)
	c.Lock()
	defer c.Unlock()
	delete(c.innerClusters, cluster.Name)
}

func (c *clusterClients) GetInnerCluster(name string) *innerCluster {
	c.RLock()
	if cluster, ok := c.innerClusters[name]; ok {
		c.RUnlock()
		return cluster
	}
	c.RUnlock()
	if cluster, err := c.clusterLister.Get(name); err == nil {
		// double check if the cluster exists but is not cached
		return c.addCluster(cluster)
	}
	return nil
}

// proxy handler of /clusters/{cluster}/...
func serveClusterRequest(c *clusterClients, name string) error {
	inner := c.GetInnerCluster(name)
	if inner == nil {
		return fmt.Errorf("cluster %s not found", name)
	}
	fmt.Printf("proxying request for %s to %s\n", name, inner.KubernetesURL)
	return nil
}

func main() {
	lister := &clusterLister{items: make(map[string]*Cluster)}
	c := NewClusterClient(lister)

	// the informer has delivered the host cluster already
	host := &Cluster{Name: "host", KubernetesAPIEndpoint: "https://10.0.0.1:6443", KubeSphereAPIEndpoint: "http://ks-apiserver.kubesphere-system.svc"}
	lister.items[host.Name] = host
	c.addCluster(host)

	// member-1 was just joined: the lister sees it, the AddFunc has not run yet
	member := &Cluster{Name: "member-1", KubernetesAPIEndpoint: "https://10.0.1.1:6443", KubeSphereAPIEndpoint: "http://10.0.1.1:30880"}
	lister.mu.Lock()
	lister.items[member.Name] = member
	lister.mu.Unlock()

	done := make(chan error)
	go func() {
		done <- serveClusterRequest(c, "member-1")
	}()
	select {
	case err := <-done:
		fmt.Println("request finished:", err)
	case <-time.After(500 * time.Millisecond):
		fmt.Println("request for member-1 is stuck; the informer now tries to add the cluster")
		c.addCluster(member)
		fmt.Println("request finished:", <-done)
	}
}
