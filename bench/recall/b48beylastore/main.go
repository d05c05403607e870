// Project: grafana/beyla 1.9 development (eBPF auto-instrumentation), Nov 2024.
// Files/functions: pkg/internal/kube/store.go: Store.ServiceNameNamespaceForIP,
// Store.ObjectMetaByIP, Store.ServiceNameNamespaceForMetadata,
// Store.serviceNameNamespaceForPod, Store.serviceNameFromEnv, Store.On;
// pkg/transform/name_resolver.go: NameResolver.resolveFromK8s, dnsResolve.
// Reference: grafana/beyla PR #1320 "Add missing mutex in kube store
// functions" (fixing "concurrent map read and map write" in
// ServiceNameNamespaceForIP) and the follow-up PR #1321 "Fix potential
// deadlock in store.go" ("Some functions invoked mutex.Lock, where their
// invokers already locked it").
//
// ServiceNameNamespaceForIP caches results in otelServiceInfoByIP, so after
// the cache miss it takes the store's write lock (s.access.Lock) to fill the
// cache. While holding it, it resolved the object through the exported
// helpers ObjectMetaByIP and ServiceNameNamespaceForMetadata, which take
// s.access.RLock themselves. sync.RWMutex is not reentrant: an RLock by the
// goroutine that holds the write lock blocks for ever, so the first trace
// whose peer IP was not cached froze the name-resolver pipeline stage. The fix
// reads under RLock using lock-free internal helpers (objectMetaByIP map,
// serviceNameNamespaceForMetadata) and takes the write lock only to store the
// cache entry.
package main

import (
	"fmt"
	"sync"
)

type Owner struct{ Name, Kind string }

type PodInfo struct {
	Owners     []*Owner
	Containers []*ContainerInfo
}

type ContainerInfo struct {
	Id  string
	Env map[string]string
}

type ObjectMeta struct {
	Name, Namespace string
	Ips             []string
	Pod             *PodInfo
}

type Event struct{ Resource *ObjectMeta }

type OTelServiceNamePair struct{ Name, Namespace string }

func TopOwner(pod *PodInfo) *Owner {
	if pod == nil || len(pod.Owners) == 0 {
		return nil
	}
	return pod.Owners[len(pod.Owners)-1]
}

func ownerID(namespace, name string) string { return namespace + "." + name }

type Store struct {
	access              sync.RWMutex
	ipInfos             map[string]*ObjectMeta
	containersByOwner   map[string][]*ContainerInfo
	otelServiceInfoByIP map[string]OTelServiceNamePair
}

func NewStore() *Store {
	return &Store{
		ipInfos:             map[string]*ObjectMeta{},
		containersByOwner:   map[string][]*ContainerInfo{},
		otelServiceInfoByIP: map[string]OTelServiceNamePair{},
	}
}

// On is invoked by the informer when a Kube object is created or updated.
func (s *Store) On(event *Event) {
	s.access.Lock()
	defer s.access.Unlock()
	meta := event.Resource
	for _, ip := range meta.Ips {
		s.ipInfos[ip] = meta
	}
	if owner := TopOwner(meta.Pod); owner != nil {
		id := ownerID(meta.Namespace, owner.Name)
		s.containersByOwner[id] = append(s.containersByOwner[id], meta.Pod.Containers...)
	}
}

func (s *Store) ObjectMetaByIP(ip string) *ObjectMeta {
	s.access.RLock()
	defer s.access.RUnlock()
	return s.ipInfos[ip]
}

func (s *Store) ServiceNameNamespaceForMetadata(om *ObjectMeta) (string, string) {
	s.access.RLock()
	defer s.access.RUnlock()
	if owner := TopOwner(om.Pod); owner != nil {
		return s.serviceNameNamespaceForPod(om, owner)
	}
	return s.serviceNameNamespaceOwnerID(ownerID(om.Namespace, om.Name), om.Name, om.Namespace)
}

func (s *Store) serviceNameNamespaceForPod(om *ObjectMeta, owner *Owner) (string, string) {
	return s.serviceNameNamespaceOwnerID(ownerID(om.Namespace, owner.Name), owner.Name, om.Namespace)
}

func (s *Store) serviceNameNamespaceOwnerID(ownerKey, name, namespace string) (string, string) {
	if envName, ok := s.serviceNameFromEnv(ownerKey); ok {
		name = envName
	}
	return name, namespace
}

func (s *Store) serviceNameFromEnv(ownerKey string) (string, bool) {
	for _, c := range s.containersByOwner[ownerKey] {
		if serviceName, ok := c.Env["OTEL_SERVICE_NAME"]; ok {
			return serviceName, true
		}
	}
	return "", false
}

// ServiceNameNamespaceForIP returns the service name and namespace for a given IP address
func (s *Store) ServiceNameNamespaceForIP(ip string) (string, string) {
	s.access.RLock()
	if serviceInfo, ok := s.otelServiceInfoByIP[ip]; ok {
		s.access.RUnlock()
		return serviceInfo.Name, serviceInfo.Namespace
	}
	s.access.RUnlock()

	s.access.Lock()
	defer s.access.Unlock()

	name, namespace := "", ""
	if om := s.ObjectMetaByIP(ip); om != nil {
		name, namespace = s.ServiceNameNamespaceForMetadata(om)
	}
	s.otelServiceInfoByIP[ip] = OTelServiceNamePair{Name: name, Namespace: namespace}
	return name, namespace
}

// NameResolver decorates spans with the peer/host service names.
type NameResolver struct{ db *Store }

func (r *NameResolver) resolveFromK8s(ip string) (string, string) {
	return r.db.ServiceNameNamespaceForIP(ip)
}

func (r *NameResolver) dnsResolve(ip string) (string, string) {
	if name, ns := r.resolveFromK8s(ip); name != "" {
		return name, ns
	}
	return ip, ""
}

func main() {
	store := NewStore()
	store.On(&Event{Resource: &ObjectMeta{
		Name: "frontend-7d9f-abcde", Namespace: "shop", Ips: []string{"10.0.0.7"},
		Pod: &PodInfo{
			Owners:     []*Owner{{Name: "frontend-7d9f", Kind: "ReplicaSet"}, {Name: "frontend", Kind: "Deployment"}},
			Containers: []*ContainerInfo{{Id: "c1", Env: map[string]string{"OTEL_SERVICE_NAME": "shop-frontend"}}},
		},
	}})
	resolver := &NameResolver{db: store}
	name, ns := resolver.dnsResolve("10.0.0.7")
	fmt.Println("peer service:", name, ns)
}
