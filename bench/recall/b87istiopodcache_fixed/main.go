// Project: istio/istio (pilot/pkg/serviceregistry/kube/cache.go PodCache.event/getPodKey, pilot/pkg/proxy/envoy/v2/eds.go DiscoveryServer.WorkloadUpdate, pilot/pkg/proxy/envoy/discovery.go DiscoveryService.ConfigUpdate/clearCache with the global clearCacheMutex), Pilot 1.0.x, late 2018 (approximate reconstruction of the second goroutine).
// Bug: PodCache.event holds the pod cache write lock (defer Unlock) while it reports a pod's label change through XDSUpdater.WorkloadUpdate, which requests a full push through ConfigUpdate and clearCache and so locks clearCacheMutex. A push already running under clearCacheMutex computes endpoints through the kube registry, whose InstancesByPort looks pods up with PodCache.getPodKey under the read lock, so Pilot stops pushing forever (issue #9043, fixed by PR #10379 "First round of mutex fixing", which narrows the pod cache critical section so the XDS updater is called after the lock is released).
package main

import (
	"fmt"
	"sync"
	"time"
)

type Pod struct {
	Name, Namespace, IP string
	Labels              map[string]string
}

type XDSUpdater interface {
	WorkloadUpdate(id string, labels map[string]string, annotations map[string]string)
}

type ConfigUpdater interface{ ConfigUpdate(full bool) }

// ---- pilot/pkg/serviceregistry/kube ----

type Controller struct {
	pods       *PodCache
	XDSUpdater XDSUpdater
	endpoints  map[string][]string // service -> endpoint IPs
}

type PodCache struct {
	rwMu sync.RWMutex
	keys map[string]string // pod IP -> namespace/name
	c    *Controller
}

func (pc *PodCache) event(pod *Pod, ev string) {
	key := pod.Namespace + "/" + pod.Name
	notify := false
	var labels map[string]string
	// Hold the cache lock only while the cache itself is updated.
	pc.rwMu.Lock()
	switch ev {
	case "add", "update":
		pc.keys[pod.IP] = key
		notify, labels = true, pod.Labels
	case "delete":
		if pc.keys[pod.IP] == key {
			delete(pc.keys, pod.IP)
			notify = true
		}
	}
	pc.rwMu.Unlock()
	if notify && pc.c != nil && pc.c.XDSUpdater != nil {
		pc.c.XDSUpdater.WorkloadUpdate(pod.IP, labels, nil)
	}
}

func (pc *PodCache) getPodKey(addr string) (string, bool) {
	pc.rwMu.RLock()
	defer pc.rwMu.RUnlock()
	key, exists := pc.keys[addr]
	return key, exists
}

func (c *Controller) InstancesByPort(hostname string) []string {
	var out []string
	for _, ip := range c.endpoints[hostname] {
		if key, ok := c.pods.getPodKey(ip); ok {
			out = append(out, key+"@"+ip)
		}
	}
	return out
}

// ---- pilot/pkg/proxy/envoy/v2 ----

type Workload struct{ Labels map[string]string }

type DiscoveryServer struct {
	registry      *Controller
	ConfigUpdater ConfigUpdater
	mutex         sync.RWMutex
	WorkloadsByID map[string]*Workload
}

func (s *DiscoveryServer) WorkloadUpdate(id string, labels map[string]string, _ map[string]string) {
	s.mutex.Lock()
	w, ok := s.WorkloadsByID[id]
	if !ok || labels == nil {
		s.WorkloadsByID[id] = &Workload{Labels: labels}
		s.mutex.Unlock()
		return
	}
	changed := fmt.Sprint(w.Labels) != fmt.Sprint(labels)
	w.Labels = labels
	s.mutex.Unlock()
	if changed {
		// Label changes require recomputing the config: full push.
		s.ConfigUpdater.ConfigUpdate(true)
	}
}

// ClearCacheFunc returns the full push run by the v1 cache clearing.
func (s *DiscoveryServer) ClearCacheFunc() func() {
	return func() {
		time.Sleep(100 * time.Millisecond) // updateModel: init the push context
		fmt.Println("EDS push:", s.registry.InstancesByPort("reviews.default.svc.cluster.local"))
	}
}

// ---- pilot/pkg/proxy/envoy (v1 discovery service) ----

var (
	clearCacheMutex sync.Mutex
	lastClearCache  time.Time
	clearCacheCount int
	V2ClearCache    func()
)

type DiscoveryService struct{}

func (ds *DiscoveryService) ConfigUpdate(full bool) { ds.clearCache() }

func (ds *DiscoveryService) clearCache() {
	clearCacheMutex.Lock()
	defer clearCacheMutex.Unlock()
	clearCacheCount++
	lastClearCache = time.Now()
	V2ClearCache()
}

func main() {
	kube := &Controller{endpoints: map[string][]string{"reviews.default.svc.cluster.local": {"10.1.0.7"}}}
	kube.pods = &PodCache{keys: map[string]string{}, c: kube}
	v2 := &DiscoveryServer{registry: kube, WorkloadsByID: map[string]*Workload{}}
	v1 := &DiscoveryService{}
	v2.ConfigUpdater = v1
	kube.XDSUpdater = v2
	V2ClearCache = v2.ClearCacheFunc()

	pod := &Pod{Name: "reviews-v1-x7", Namespace: "default", IP: "10.1.0.7", Labels: map[string]string{"version": "v1"}}
	kube.pods.event(pod, "add")

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // a VirtualService change clears the cache and pushes
		defer wg.Done()
		v1.ConfigUpdate(true)
	}()
	go func() { // the pod informer reports a relabelled pod
		defer wg.Done()
		time.Sleep(50 * time.Millisecond)
		relabel := *pod
		relabel.Labels = map[string]string{"version": "v2"}
		kube.pods.event(&relabel, "update")
	}()
	wg.Wait()
	fmt.Println("done, cache cleared", clearCacheCount, "times")
}
