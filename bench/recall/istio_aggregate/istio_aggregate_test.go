// Project: istio (pilot/pkg/serviceregistry/aggregate).
// Bug (approximate, from memory): the aggregate Controller guards its
// registry list with storeLock (sync.RWMutex). Services() held
// storeLock.RLock() while listing every registry, and the helper that merges
// a service seen in several clusters called the exported GetRegistries(),
// which RLocks storeLock again. If the multicluster secret controller calls
// AddRegistry() (storeLock.Lock()) between the two RLocks, the pending writer
// blocks the nested RLock and Services(), AddRegistry() and every later
// reader hang. Fixed by having Services() work on a snapshot from
// GetRegistries() instead of holding storeLock itself. Issue/PR number not
// remembered (approximate).
package istio_aggregate

import (
	"sort"
	"sync"
	"testing"
	"time"
)

type Hostname string

type ClusterID string

type Service struct {
	Hostname   Hostname
	ClusterVIP map[ClusterID]string
}

// serviceregistry.Instance, trimmed.
type Instance interface {
	Cluster() ClusterID
	Services() ([]*Service, error)
}

type memRegistry struct {
	cluster  ClusterID
	services []*Service
	delay    time.Duration
}

func (m *memRegistry) Cluster() ClusterID { return m.cluster }

func (m *memRegistry) Services() ([]*Service, error) {
	time.Sleep(m.delay) // listing from an informer cache
	return m.services, nil
}

type registryEntry struct {
	Instance
}

type Controller struct {
	storeLock  sync.RWMutex
	registries []*registryEntry
}

func NewController() *Controller { return &Controller{} }

// AddRegistry adds registries into the aggregated controller.
func (c *Controller) AddRegistry(registry Instance) {
	c.storeLock.Lock() // DEADLOCK HERE
	defer c.storeLock.Unlock()
	c.registries = append(c.registries, &registryEntry{Instance: registry})
}

// GetRegistries returns a copy of all registries.
func (c *Controller) GetRegistries() []Instance {
	c.storeLock.RLock() // DEADLOCK HERE
	defer c.storeLock.RUnlock()
	out := make([]Instance, len(c.registries))
	for i := range c.registries {
		out[i] = c.registries[i]
	}
	return out
}

// mergeService merges the cluster VIPs of src into dst, in registry order.
func (c *Controller) mergeService(dst, src *Service) {
	for _, r := range c.GetRegistries() {
		if vip, ok := src.ClusterVIP[r.Cluster()]; ok {
			dst.ClusterVIP[r.Cluster()] = vip
		}
	}
}

// Services lists services from all platforms.
func (c *Controller) Services() ([]*Service, error) {
	c.storeLock.RLock()
	defer c.storeLock.RUnlock()

	smap := make(map[Hostname]*Service)
	var services []*Service
	for _, r := range c.registries {
		svcs, err := r.Services()
		if err != nil {
			return nil, err
		}
		for _, s := range svcs {
			sp, ok := smap[s.Hostname]
			if !ok {
				sp = &Service{Hostname: s.Hostname, ClusterVIP: map[ClusterID]string{}}
				smap[s.Hostname] = sp
				services = append(services, sp)
			}
			c.mergeService(sp, s)
		}
	}
	sort.Slice(services, func(i, j int) bool { return services[i].Hostname < services[j].Hostname })
	return services, nil
}

// The xDS push path reaches Services() through a method value.
type PushContext struct {
	servicesFn func() ([]*Service, error)
	services   []*Service
}

func (ps *PushContext) initServiceRegistry() error {
	svcs, err := ps.servicesFn()
	ps.services = svcs
	return err
}

func TestServicesDuringAddRegistry(t *testing.T) {
	c := NewController()
	// cluster-1 is slow to list, so Services() is still inside the outer
	// RLock when the multicluster controller adds cluster-3.
	c.AddRegistry(&memRegistry{cluster: "cluster-1", delay: 100 * time.Millisecond,
		services: []*Service{{Hostname: "reviews.default.svc.cluster.local", ClusterVIP: map[ClusterID]string{"cluster-1": "10.0.0.1"}}}})
	c.AddRegistry(&memRegistry{cluster: "cluster-2",
		services: []*Service{{Hostname: "reviews.default.svc.cluster.local", ClusterVIP: map[ClusterID]string{"cluster-2": "10.1.0.1"}}}})

	ps := &PushContext{servicesFn: c.Services}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		_ = ps.initServiceRegistry()
	}()
	go func() {
		defer wg.Done()
		time.Sleep(30 * time.Millisecond)
		c.AddRegistry(&memRegistry{cluster: "cluster-3"})
	}()
	wg.Wait()
}
