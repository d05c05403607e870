// Fixed version (read lock no longer held across the local reshard).
// Project: grafana/agent, scraping service mode, v0.18-v0.19 (September 2021).
// Files: pkg/metrics/cluster/node.go (node.run, performClusterReshard, Owns,
// ApplyConfig), pkg/metrics/cluster/cluster.go (Cluster.Reshard),
// pkg/metrics/cluster/config_watcher.go (configWatcher.Refresh, owns).
// Issue: grafana/agent#877 "Scraping service can deadlock when reloading
// during join" (closed by the follow-up that shortened the read-locked
// section in node.run).
//
// When the node joins the ring, node.run read-locks n.mut for the whole join
// and calls performClusterReshard, which, after notifying the other agents,
// runs the local reshard through the ScrapingServiceServer interface. The
// local Cluster.Reshard asks its configWatcher to Refresh, and Refresh asks
// the ownership function for every config in the KV store whether this agent
// owns it; that function is node.Owns, which read-locks n.mut again in the
// same goroutine. If /-/reload (ApplyConfig, which write-locks n.mut) arrives
// between the two read locks, the writer waits for the outer reader and the
// inner RLock waits behind the writer: the node, the reload handler and every
// later Owns call hang. The fix stops holding n.mut across the whole reshard
// so the read lock is never taken recursively.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type ReshardRequest struct{}
type ReshardResponse struct{}

// ScrapingServiceServer is implemented by the local Cluster.
type ScrapingServiceServer interface {
	Reshard(ctx context.Context, req *ReshardRequest) (*ReshardResponse, error)
}

type Config struct {
	Enabled                    bool
	ClusterReshardEventTimeout time.Duration
}

type ring struct{ instances []string }

func (r *ring) GetAllHealthy() []string { return r.instances }
func (r *ring) Owner(key string) string { return r.instances[len(key)%len(r.instances)] }

type lifecycler struct{ Addr string }

type node struct {
	srv ScrapingServiceServer

	mut  sync.RWMutex
	cfg  Config
	ring *ring
	lc   *lifecycler

	reload chan struct{}
}

func (n *node) ApplyConfig(cfg Config) error {
	n.mut.Lock()
	defer n.mut.Unlock()
	n.cfg = cfg
	n.ring = &ring{instances: []string{"agent-0:12345", "agent-1:12345"}}
	n.lc = &lifecycler{Addr: "agent-0:12345"}
	n.reload <- struct{}{}
	return nil
}

// run waits for connection to the ring and kickstarts the join process.
func (n *node) run() {
	for range n.reload {
		if err := n.performClusterReshard(context.Background(), true); err != nil {
			fmt.Println("dynamic cluster reshard did not succeed:", err)
		}
	}
}

func (n *node) performClusterReshard(ctx context.Context, joining bool) error {
	// Only read the ring and lifecycler under the lock; the local reshard
	// calls back into Owns, which read-locks n.mut itself.
	n.mut.RLock()
	r, lc := n.ring, n.lc
	n.mut.RUnlock()

	if r == nil || lc == nil {
		return nil
	}
	for _, addr := range r.GetAllHealthy() {
		if addr == lc.Addr {
			continue
		}
		n.notifyReshard(ctx, addr)
	}
	if joining {
		if _, err := n.srv.Reshard(ctx, &ReshardRequest{}); err != nil {
			return err
		}
	}
	return nil
}

func (n *node) notifyReshard(ctx context.Context, addr string) {}

// Owns checks to see if a key is owned by this node.
func (n *node) Owns(key string) (bool, error) {
	n.mut.RLock()
	defer n.mut.RUnlock()
	return n.ring.Owner(key) == n.lc.Addr, nil
}

// configStore is the KV store (consul/etcd) holding the instance configs.
type configStore struct{ keys []string }

func (s *configStore) All(ctx context.Context) []string {
	time.Sleep(100 * time.Millisecond) // KV list round trip
	return s.keys
}

type OwnershipFunc func(key string) (bool, error)

type configWatcher struct {
	mut     sync.Mutex
	store   *configStore
	owns    OwnershipFunc
	applied map[string]bool
}

func (w *configWatcher) Refresh(ctx context.Context) error {
	w.mut.Lock()
	defer w.mut.Unlock()
	for _, key := range w.store.All(ctx) {
		owned, err := w.owns(key)
		if err != nil {
			return err
		}
		w.applied[key] = owned
	}
	return nil
}

type Cluster struct {
	node    *node
	watcher *configWatcher
}

func (c *Cluster) Reshard(ctx context.Context, _ *ReshardRequest) (*ReshardResponse, error) {
	return &ReshardResponse{}, c.watcher.Refresh(ctx)
}

func main() {
	n := &node{reload: make(chan struct{}, 1)}
	c := &Cluster{node: n}
	c.watcher = &configWatcher{
		store:   &configStore{keys: []string{"tenant-a", "tenant-bb"}},
		owns:    n.Owns,
		applied: map[string]bool{},
	}
	n.srv = c

	if err := n.ApplyConfig(Config{Enabled: true}); err != nil {
		panic(err)
	}
	go n.run()

	time.Sleep(50 * time.Millisecond)
	// POST /-/reload with a changed cluster config while the join is running.
	if err := n.ApplyConfig(Config{Enabled: true, ClusterReshardEventTimeout: time.Minute}); err != nil {
		panic(err)
	}
	time.Sleep(200 * time.Millisecond)
	c.watcher.mut.Lock()
	fmt.Println("owned configs:", c.watcher.applied)
	c.watcher.mut.Unlock()
}
