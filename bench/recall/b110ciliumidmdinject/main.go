// Project: cilium/cilium (pkg/ipcache/metadata.go InjectLabels and GetIDMetadataByIP, pkg/ipcache/cidr.go AllocateCIDRsForIPs, pkg/policy/selectorcache.go AddFQDNSelector and UpdateIdentities, daemon/cmd/identity.go cachingIdentityAllocator), v1.11 development, December 2021.
// Bug: the label injection controller runs InjectLabels with the global identity metadata lock idMDMU write-locked and, still holding it, calls SelectorCache.UpdateIdentities, which locks the selector cache; an endpoint regeneration adding a toFQDNs selector holds the selector cache lock in AddFQDNSelector while allocating CIDR identities for the selector's IPs, and the allocation reads the kube-apiserver labels with GetIDMetadataByIP, which read-locks idMDMU, so the two goroutines deadlock AB-BA (fixed by PR #18343 "Don't hold idMDMU lock while calling UpdateIdentities from InjectLabels").
package main

import (
	"fmt"
	"sync"
	"time"
)

type NumericIdentity uint32

type Labels map[string]string

func (l Labels) MergeLabels(from Labels) {
	for k, v := range from {
		l[k] = v
	}
}

type Identity struct {
	ID     NumericIdentity
	Labels Labels
}

type IdentityCache map[NumericIdentity]Labels

// ---- pkg/ipcache (identity metadata, global state) ----

var (
	idMDMU           sync.RWMutex
	identityMetadata = map[string]Labels{}

	allocMu     sync.Mutex
	nextLocalID NumericIdentity = 16777216
	cidrIDs                     = map[string]*Identity{}
)

// UpsertMetadata is called by the k8s watcher for kube-apiserver endpoints.
func UpsertMetadata(prefix string, lbls Labels) {
	idMDMU.Lock()
	defer idMDMU.Unlock()
	identityMetadata[prefix] = lbls
}

// GetIDMetadataByIP returns the metadata labels associated with the prefix.
func GetIDMetadataByIP(prefix string) Labels {
	idMDMU.RLock()
	defer idMDMU.RUnlock()
	return identityMetadata[prefix]
}

func allocate(prefix string, lbls Labels) (*Identity, bool) {
	allocMu.Lock()
	defer allocMu.Unlock()
	if id, ok := cidrIDs[prefix]; ok {
		return id, false
	}
	id := &Identity{ID: nextLocalID, Labels: lbls}
	nextLocalID++
	cidrIDs[prefix] = id
	return id, true
}

func getCIDRLabels(prefix string) Labels {
	return Labels{"cidr:" + prefix: ""}
}

// allocateCIDRs figures out the labels of each prefix, including the
// metadata labels such as reserved:kube-apiserver, and allocates identities.
func allocateCIDRs(prefixes []string) []*Identity {
	ids := make([]*Identity, 0, len(prefixes))
	for _, prefix := range prefixes {
		lbls := getCIDRLabels(prefix)
		lbls.MergeLabels(GetIDMetadataByIP(prefix))
		id, _ := allocate(prefix, lbls)
		ids = append(ids, id)
	}
	return ids
}

// AllocateCIDRsForIPs allocates CIDR identities for the given IPs.
func AllocateCIDRsForIPs(ips []string) []*Identity {
	prefixes := make([]string, 0, len(ips))
	for _, ip := range ips {
		prefixes = append(prefixes, ip+"/32")
	}
	return allocateCIDRs(prefixes)
}

type identityUpdater interface {
	UpdateIdentities(added, deleted IdentityCache)
}

// InjectLabels injects the identity metadata labels into the ipcache,
// allocating new identities for prefixes whose labels changed.
func InjectLabels(updater identityUpdater) {
	idsToPropagate := make(IdentityCache)

	idMDMU.Lock()
	defer idMDMU.Unlock()

	for prefix, lbls := range identityMetadata {
		all := getCIDRLabels(prefix)
		all.MergeLabels(lbls)
		// Allocation goes through the identity allocator.
		time.Sleep(20 * time.Millisecond)
		id, isNew := allocate(prefix, all)
		if isNew {
			idsToPropagate[id.ID] = id.Labels
		}
	}

	if len(idsToPropagate) > 0 {
		// Recalculate policy first before upserting into the ipcache.
		updater.UpdateIdentities(idsToPropagate, nil)
	}
}

// ---- daemon/cmd/identity.go ----

type cachingIdentityAllocator struct{}

func (cachingIdentityAllocator) AllocateCIDRsForIPs(ips []string) []*Identity {
	return AllocateCIDRsForIPs(ips)
}

// ---- pkg/fqdn NameManager (identityNotifier) ----

type NameManager struct {
	sync.Mutex
	cache        map[string][]string
	allSelectors map[string][]string
}

func (n *NameManager) RegisterForIdentityUpdatesLocked(selector string) map[string][]string {
	ips := n.cache[selector]
	n.allSelectors[selector] = ips
	return map[string][]string{selector: ips}
}

type identityNotifier interface {
	Lock()
	Unlock()
	RegisterForIdentityUpdatesLocked(selector string) map[string][]string
}

// ---- pkg/policy/selectorcache.go ----

type CIDRIdentityAllocator interface {
	AllocateCIDRsForIPs(ips []string) []*Identity
}

type fqdnSelector struct {
	key        string
	selections []NumericIdentity
}

func (f *fqdnSelector) allocateIdentityMappings(allocator CIDRIdentityAllocator, selectorIPMapping map[string][]string) {
	ids := allocator.AllocateCIDRsForIPs(selectorIPMapping[f.key])
	for _, id := range ids {
		f.selections = append(f.selections, id.ID)
	}
}

type SelectorCache struct {
	mutex                 sync.RWMutex
	idCache               IdentityCache
	selectors             map[string]*fqdnSelector
	localIdentityNotifier identityNotifier
	idAllocator           CIDRIdentityAllocator
}

func (sc *SelectorCache) AddFQDNSelector(fqdnSelec string) *fqdnSelector {
	// Lock NameManager before the SelectorCache.
	sc.localIdentityNotifier.Lock()
	defer sc.localIdentityNotifier.Unlock()

	sc.mutex.Lock()
	defer sc.mutex.Unlock()
	if sel, exists := sc.selectors[fqdnSelec]; exists {
		return sel
	}
	newFQDNSel := &fqdnSelector{key: fqdnSelec}
	selectorIPMapping := sc.localIdentityNotifier.RegisterForIdentityUpdatesLocked(fqdnSelec)
	newFQDNSel.allocateIdentityMappings(sc.idAllocator, selectorIPMapping)
	sc.selectors[fqdnSelec] = newFQDNSel
	return newFQDNSel
}

func (sc *SelectorCache) UpdateIdentities(added, deleted IdentityCache) {
	sc.mutex.Lock()
	defer sc.mutex.Unlock()
	for id, lbls := range added {
		sc.idCache[id] = lbls
	}
	for id := range deleted {
		delete(sc.idCache, id)
	}
}

// ---- pkg/endpoint: policy regeneration for a toFQDNs rule ----

type Endpoint struct {
	ID            uint16
	selectorCache *SelectorCache
}

func (e *Endpoint) regeneratePolicy(toFQDNs []string) {
	for _, sel := range toFQDNs {
		e.selectorCache.AddFQDNSelector(sel)
	}
}

func main() {
	nm := &NameManager{
		cache:        map[string][]string{"matchName: api.example.com": {"10.96.0.1"}},
		allSelectors: map[string][]string{},
	}
	sc := &SelectorCache{
		idCache:               IdentityCache{},
		selectors:             map[string]*fqdnSelector{},
		localIdentityNotifier: nm,
		idAllocator:           cachingIdentityAllocator{},
	}
	UpsertMetadata("10.96.0.1/32", Labels{"reserved:kube-apiserver": ""})

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		// ipcache-inject-labels controller
		defer wg.Done()
		InjectLabels(sc)
	}()
	go func() {
		defer wg.Done()
		time.Sleep(5 * time.Millisecond)
		ep := &Endpoint{ID: 1337, selectorCache: sc}
		ep.regeneratePolicy([]string{"matchName: api.example.com"})
	}()
	wg.Wait()
	fmt.Println("done")
}
