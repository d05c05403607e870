// Project: cilium/cilium (pkg/policy/selectorcache.go, pkg/fqdn/namemanager.go, pkg/identity/cache/local.go, pkg/identity/cache/cache.go, daemon/identity.go)
// Issue: cilium/cilium#9292 "deadlock can occur if AllocatorEventChan buffer is full and attempts to allocate local CIDR identities are in flight", fixed by PR #9296 "policy: Fix selectorcache locking issue"
//
// SelectorCache.AddFQDNSelector write-locks sc.mutex (line 234) and,
// still holding it, registers the new selector with the DNS subsystem through
// the identityNotifier interface (line 250). The NameManager allocates a
// local CIDR identity for every IP already known for the name; each new
// identity is announced by localIdentityCache.lookupOrCreate with a send on
// the allocator's buffered event channel, made while holding the local cache
// mutex (line 77). The identity watcher goroutine drains that channel and
// hands the batch to its owner through the IdentityAllocatorOwner interface;
// the Daemon forwards it to SelectorCache.UpdateIdentities, which needs
// sc.mutex (line 262). With the watcher parked on sc.mutex nobody drains
// the channel; once its buffer is full the allocation blocks forever with
// sc.mutex held. The fix releases sc.mutex while registering with the DNS
// subsystem and re-checks the selector map afterwards.
package main

import (
	"fmt"
	"sync"
	"time"
)

type NumericIdentity uint32

// IdentityCache is a cache of identity to labels.
type IdentityCache map[NumericIdentity][]string

type FQDNSelector struct {
	MatchName string
}

// ---- pkg/identity/cache ----

type AllocatorEvent struct {
	Typ string
	ID  NumericIdentity
	Key []string
}

type AllocatorEventChan chan AllocatorEvent

// IdentityAllocatorOwner is the interface the owner of an identity allocator
// must implement.
type IdentityAllocatorOwner interface {
	UpdateIdentities(added, deleted IdentityCache)
}

type Identity struct {
	ID             NumericIdentity
	Labels         []string
	ReferenceCount int
}

type localIdentityCache struct {
	mutex               sync.Mutex
	identitiesByLabels  map[string]*Identity
	nextNumericIdentity NumericIdentity
	events              AllocatorEventChan
}

func (l *localIdentityCache) lookupOrCreate(lbls []string) (*Identity, bool, error) {
	key := fmt.Sprint(lbls)
	l.mutex.Lock()
	defer l.mutex.Unlock()

	if id, ok := l.identitiesByLabels[key]; ok {
		id.ReferenceCount++
		return id, false, nil
	}
	id := &Identity{ID: l.nextNumericIdentity, Labels: lbls, ReferenceCount: 1}
	l.nextNumericIdentity++
	l.identitiesByLabels[key] = id

	if l.events != nil {
		l.events <- AllocatorEvent{Typ: "create", ID: id.ID, Key: lbls}
	}
	return id, true, nil
}

type CachingIdentityAllocator struct {
	owner           IdentityAllocatorOwner
	localIdentities *localIdentityCache
	events          AllocatorEventChan
}

func NewCachingIdentityAllocator(owner IdentityAllocatorOwner) *CachingIdentityAllocator {
	// eventsQueueSize is 1024 in the agent; a short queue shows the same thing.
	events := make(AllocatorEventChan, 2)
	m := &CachingIdentityAllocator{
		owner:  owner,
		events: events,
		localIdentities: &localIdentityCache{
			identitiesByLabels:  map[string]*Identity{},
			nextNumericIdentity: 16777217,
			events:              events,
		},
	}
	w := identityWatcher{owner: owner}
	w.watch(events)
	return m
}

func (m *CachingIdentityAllocator) AllocateIdentity(lbls []string) (*Identity, bool, error) {
	return m.localIdentities.lookupOrCreate(lbls)
}

type identityWatcher struct {
	owner IdentityAllocatorOwner
}

func collectEvent(event AllocatorEvent, added, deleted IdentityCache) {
	if event.Typ == "delete" {
		deleted[event.ID] = event.Key
		return
	}
	added[event.ID] = event.Key
}

func (w *identityWatcher) watch(events AllocatorEventChan) {
	go func() {
		for {
			added := IdentityCache{}
			deleted := IdentityCache{}
			event, ok := <-events
			if !ok {
				return
			}
			collectEvent(event, added, deleted)
		More:
			for {
				select {
				case event, ok := <-events:
					if !ok {
						break More
					}
					collectEvent(event, added, deleted)
				default:
					break More
				}
			}
			// Issue collected updates
			w.owner.UpdateIdentities(added, deleted)
		}
	}()
}

// ---- pkg/ipcache ----

func AllocateCIDRsForIPs(allocator *CachingIdentityAllocator, ips []string) ([]*Identity, error) {
	var ids []*Identity
	for _, ip := range ips {
		id, _, err := allocator.AllocateIdentity([]string{"cidr:" + ip + "/32", "reserved:world"})
		if err != nil {
			return nil, err
		}
		// upsert the prefix into the ipcache / BPF map
		time.Sleep(5 * time.Millisecond)
		ids = append(ids, id)
	}
	return ids, nil
}

// ---- pkg/fqdn ----

type identityNotifier interface {
	Lock()
	Unlock()
	RegisterForIdentityUpdatesLocked(selector FQDNSelector) []NumericIdentity
	UnregisterForIdentityUpdatesLocked(selector FQDNSelector)
}

type NameManager struct {
	sync.Mutex
	allSelectors map[FQDNSelector]struct{}
	cache        map[string][]string // DNS name -> IPs seen in responses
	allocator    *CachingIdentityAllocator
}

func (n *NameManager) RegisterForIdentityUpdatesLocked(selector FQDNSelector) []NumericIdentity {
	if _, exists := n.allSelectors[selector]; exists {
		return nil
	}
	n.allSelectors[selector] = struct{}{}

	selectorIPs := n.cache[selector.MatchName]
	// Allocate identities for each IPNet and then map to selector
	ids, err := AllocateCIDRsForIPs(n.allocator, selectorIPs)
	if err != nil {
		return nil
	}
	out := make([]NumericIdentity, 0, len(ids))
	for _, id := range ids {
		out = append(out, id.ID)
	}
	return out
}

func (n *NameManager) UnregisterForIdentityUpdatesLocked(selector FQDNSelector) {
	delete(n.allSelectors, selector)
}

// ---- pkg/policy ----

type CachedSelectionUser interface {
	IdentitySelectionUpdated(selector string, selections []NumericIdentity)
}

type fqdnSelector struct {
	selector         FQDNSelector
	users            map[CachedSelectionUser]struct{}
	cachedSelections map[NumericIdentity]struct{}
}

func (f *fqdnSelector) addUser(user CachedSelectionUser) bool {
	if _, exists := f.users[user]; exists {
		return false
	}
	f.users[user] = struct{}{}
	return true
}

type SelectorCache struct {
	mutex                 sync.RWMutex
	idCache               IdentityCache
	selectors             map[string]*fqdnSelector
	localIdentityNotifier identityNotifier
}

func (sc *SelectorCache) AddFQDNSelector(user CachedSelectionUser, lookupSelector FQDNSelector) (*fqdnSelector, bool) {
	key := lookupSelector.MatchName

	sc.mutex.Lock()
	defer sc.mutex.Unlock()

	if sel, exists := sc.selectors[key]; exists {
		return sel, sel.addUser(user)
	}

	newFQDNSel := &fqdnSelector{
		selector:         lookupSelector,
		users:            map[CachedSelectionUser]struct{}{},
		cachedSelections: map[NumericIdentity]struct{}{},
	}

	// Make the FQDN subsystem aware of this selector and fetch identities
	// that the FQDN subsystem is aware of.
	sc.localIdentityNotifier.Lock()
	ids := sc.localIdentityNotifier.RegisterForIdentityUpdatesLocked(newFQDNSel.selector)
	sc.localIdentityNotifier.Unlock()

	for _, id := range ids {
		newFQDNSel.cachedSelections[id] = struct{}{}
	}
	sc.selectors[key] = newFQDNSel
	return newFQDNSel, newFQDNSel.addUser(user)
}

// UpdateIdentities propagates identity updates to selectors.
func (sc *SelectorCache) UpdateIdentities(added, deleted IdentityCache) {
	sc.mutex.Lock()
	defer sc.mutex.Unlock()
	for id := range deleted {
		delete(sc.idCache, id)
	}
	for id, lbls := range added {
		sc.idCache[id] = lbls
	}
}

type Repository struct {
	selectorCache *SelectorCache
}

func (p *Repository) GetSelectorCache() *SelectorCache { return p.selectorCache }

// ---- daemon ----

type Daemon struct {
	policy *Repository
}

// UpdateIdentities informs the policy package of all identity changes.
func (d *Daemon) UpdateIdentities(added, deleted IdentityCache) {
	d.policy.GetSelectorCache().UpdateIdentities(added, deleted)
}

type endpoint struct{ ID uint16 }

func (e *endpoint) IdentitySelectionUpdated(selector string, selections []NumericIdentity) {}

func main() {
	d := &Daemon{}
	sc := &SelectorCache{idCache: IdentityCache{}, selectors: map[string]*fqdnSelector{}}
	d.policy = &Repository{selectorCache: sc}

	allocator := NewCachingIdentityAllocator(d)
	nameManager := &NameManager{
		allSelectors: map[FQDNSelector]struct{}{},
		cache: map[string][]string{
			"api.github.com": {"140.82.112.5", "140.82.112.6", "140.82.113.5", "140.82.113.6", "140.82.114.5", "140.82.114.6"},
		},
		allocator: allocator,
	}
	sc.localIdentityNotifier = nameManager

	// A CiliumNetworkPolicy with toFQDNs: matchName api.github.com is
	// imported; the policy repository adds its selector to the cache.
	sel, added := sc.AddFQDNSelector(&endpoint{ID: 1234}, FQDNSelector{MatchName: "api.github.com"})
	fmt.Println("selector added:", added, "identities:", len(sel.cachedSelections))
}
