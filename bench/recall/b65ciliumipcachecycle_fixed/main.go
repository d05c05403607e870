// Shape of cilium/cilium#26242 (backported as #29408, "don't hold EP lock
// while generating policy"): a three-lock wait cycle, IPCache > Endpoint >
// NameManager > IPCache. The k8s watcher removes kube-apiserver labels
// under the IPCache lock, and IPCache.UpdatePolicyMaps locks every
// endpoint through the EndpointManager. An endpoint regeneration holds
// the endpoint lock while resolving policy, and
// SelectorCache.AddFQDNSelector takes the NameManager lock. The DNS
// proxy's UpdateGenerateDNS holds the NameManager lock, and the
// updateSelectors callback allocates CIDR identities, which upserts into
// the IPCache. Three goroutines, each holding one of the locks, wait for
// the next.
package main

import (
	"fmt"
	"sync"
	"time"
)

const stepLatency = 100 * time.Millisecond // work done under each lock

type Identity uint32

// policyMapUpdater is implemented by the EndpointManager.
type policyMapUpdater interface{ UpdatePolicyMaps() }

type IPCache struct {
	mutex         sync.RWMutex
	ipToIdentity  map[string]Identity
	metadata      map[string][]string
	policyUpdater policyMapUpdater
}

func (ipc *IPCache) Upsert(ip string, id Identity) {
	ipc.mutex.Lock()
	defer ipc.mutex.Unlock()
	ipc.ipToIdentity[ip] = id
}

func (ipc *IPCache) RemoveLabelsExcluded(lbl string, keep map[string]bool) {
	ipc.mutex.Lock()
	defer ipc.mutex.Unlock()
	toRemove := map[string][]string{}
	for prefix := range ipc.metadata {
		if !keep[prefix] {
			toRemove[prefix] = []string{lbl}
		}
	}
	ipc.removeLabelsFromIPs(toRemove)
}

func (ipc *IPCache) removeLabelsFromIPs(m map[string][]string) {
	for prefix := range m {
		delete(ipc.metadata, prefix)
		delete(ipc.ipToIdentity, prefix)
	}
	time.Sleep(stepLatency) // identity re-resolution for the affected prefixes
	ipc.UpdatePolicyMaps()
}

func (ipc *IPCache) UpdatePolicyMaps() { ipc.policyUpdater.UpdatePolicyMaps() }

// AllocateCIDRsForIPs is how FQDN policy turns DNS answers into identities.
func (ipc *IPCache) AllocateCIDRsForIPs(ips []string) []Identity {
	ids := make([]Identity, 0, len(ips))
	for i, ip := range ips {
		id := Identity(16777217 + i)
		ipc.Upsert(ip, id)
		ids = append(ids, id)
	}
	return ids
}

type Endpoint struct {
	mutex         sync.RWMutex
	ID            uint16
	repo          *Repository
	desiredPolicy []string
	pendingMapOps int
}

func (e *Endpoint) ApplyPolicyMapChanges() {
	e.mutex.Lock()
	defer e.mutex.Unlock()
	e.pendingMapOps = 0
}

func (e *Endpoint) regeneratePolicy() {
	// Fix (#26242): compute the policy without the endpoint lock, then take
	// the lock only to install the result.
	time.Sleep(stepLatency) // L3 policy computation
	policy := e.repo.resolvePolicy(e)
	e.mutex.Lock()
	defer e.mutex.Unlock()
	e.desiredPolicy = policy
}

type EndpointManager struct {
	mutex     sync.RWMutex
	endpoints map[uint16]*Endpoint
}

func (mgr *EndpointManager) GetEndpoints() []*Endpoint {
	mgr.mutex.RLock()
	defer mgr.mutex.RUnlock()
	eps := make([]*Endpoint, 0, len(mgr.endpoints))
	for _, ep := range mgr.endpoints {
		eps = append(eps, ep)
	}
	return eps
}

func (mgr *EndpointManager) UpdatePolicyMaps() {
	for _, ep := range mgr.GetEndpoints() {
		ep.ApplyPolicyMapChanges()
	}
}

type NameManager struct {
	sync.Mutex
	selectors       map[string]bool
	updateSelectors func(names map[string][]string)
}

func (n *NameManager) RegisterForIdentityUpdatesLocked(name string) { n.selectors[name] = true }

func (n *NameManager) UpdateGenerateDNS(updated map[string][]string) {
	n.Lock()
	defer n.Unlock()
	time.Sleep(stepLatency) // cache update and selector matching
	n.updateSelectors(updated)
}

type SelectorCache struct {
	mutex    sync.RWMutex
	names    *NameManager
	selected map[string]*Endpoint
}

func (sc *SelectorCache) AddFQDNSelector(user *Endpoint, name string) {
	sc.names.Lock() // NameManager first, then the selector cache (#10501)
	defer sc.names.Unlock()
	sc.mutex.Lock()
	defer sc.mutex.Unlock()
	sc.selected[name] = user
	sc.names.RegisterForIdentityUpdatesLocked(name)
}

type Repository struct {
	selectorCache *SelectorCache
	toFQDNs       []string
}

func (r *Repository) resolvePolicy(user *Endpoint) []string {
	for _, name := range r.toFQDNs {
		r.selectorCache.AddFQDNSelector(user, name)
	}
	return append([]string(nil), r.toFQDNs...)
}

func main() {
	mgr := &EndpointManager{endpoints: map[uint16]*Endpoint{}}
	ipc := &IPCache{ipToIdentity: map[string]Identity{}, metadata: map[string][]string{"10.0.0.1/32": {"reserved:kube-apiserver"}}, policyUpdater: mgr}
	nm := &NameManager{selectors: map[string]bool{}}
	nm.updateSelectors = func(names map[string][]string) { // Daemon.updateSelectors
		for _, ips := range names {
			ipc.AllocateCIDRsForIPs(ips)
		}
	}
	repo := &Repository{selectorCache: &SelectorCache{names: nm, selected: map[string]*Endpoint{}}, toFQDNs: []string{"*.example.com"}}
	ep := &Endpoint{ID: 2301, repo: repo}
	mgr.endpoints[ep.ID] = ep

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // k8s watcher: kube-apiserver endpoints changed
		defer wg.Done()
		ipc.RemoveLabelsExcluded("reserved:kube-apiserver", map[string]bool{})
	}()
	go func() { // endpoint regeneration
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		ep.regeneratePolicy()
	}()
	time.Sleep(20 * time.Millisecond)
	// DNS proxy: a response for a toFQDNs name.
	nm.UpdateGenerateDNS(map[string][]string{"www.example.com": {"93.184.216.34"}})
	wg.Wait()
	fmt.Println("policy:", ep.desiredPolicy, "ipcache entries:", len(ipc.ipToIdentity))
}
