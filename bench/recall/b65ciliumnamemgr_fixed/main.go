// Shape of cilium/cilium#10501 ("policy: Keep NameManager locked during
// SelectorCache operations"): UpdateGenerateDNS holds the NameManager lock
// and, through the daemon's UpdateSelectors callback, takes the
// SelectorCache lock; RemoveSelector holds the SelectorCache lock and,
// when the last user of an FQDN selector goes away, unregisters it from the
// NameManager through the identityNotifier interface, which takes the
// NameManager lock.
package main

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

// opLatency stands in for the regex matching / policy map work done under
// the locks; it makes the bad interleaving deterministic.
const opLatency = 100 * time.Millisecond

type FQDNSelector struct{ MatchName string }

func (s FQDNSelector) String() string { return "MatchName: " + s.MatchName }

// identityNotifier is the SelectorCache's view of the DNS subsystem.
type identityNotifier interface {
	RegisterForIdentityUpdatesLocked(sel FQDNSelector)
	UnregisterForIdentityUpdatesLocked(sel FQDNSelector)
	Lock()
	Unlock()
}

type CachedSelectionUser interface {
	IdentitySelectionUpdated(sel FQDNSelector, ips []string)
}

type fqdnSelector struct {
	selector FQDNSelector
	users    map[CachedSelectionUser]struct{}
	ips      []string
}

type SelectorCache struct {
	mutex                 sync.RWMutex
	selectors             map[string]*fqdnSelector
	localIdentityNotifier identityNotifier
}

func NewSelectorCache() *SelectorCache {
	return &SelectorCache{selectors: map[string]*fqdnSelector{}}
}

func (sc *SelectorCache) SetLocalIdentityNotifier(n identityNotifier) { sc.localIdentityNotifier = n }

func (sc *SelectorCache) AddFQDNSelector(user CachedSelectionUser, sel FQDNSelector) {
	sc.localIdentityNotifier.Lock()
	defer sc.localIdentityNotifier.Unlock()
	sc.mutex.Lock()
	defer sc.mutex.Unlock()
	key := sel.String()
	s, ok := sc.selectors[key]
	if !ok {
		s = &fqdnSelector{selector: sel, users: map[CachedSelectionUser]struct{}{}}
		sc.selectors[key] = s
		sc.localIdentityNotifier.RegisterForIdentityUpdatesLocked(sel)
	}
	s.users[user] = struct{}{}
}

// UpdateFQDNSelector is reached from NameManager.UpdateGenerateDNS.
func (sc *SelectorCache) UpdateFQDNSelector(sel FQDNSelector, ips []string) {
	sc.mutex.Lock()
	defer sc.mutex.Unlock()
	s, ok := sc.selectors[sel.String()]
	if !ok {
		return
	}
	s.ips = ips
	for u := range s.users {
		u.IdentitySelectionUpdated(sel, ips)
	}
}

func (sc *SelectorCache) RemoveSelector(sel FQDNSelector, user CachedSelectionUser) {
	// Fix (#10501): the NameManager lock is taken first, the SelectorCache
	// lock second, the same order as UpdateGenerateDNS.
	sc.localIdentityNotifier.Lock()
	defer sc.localIdentityNotifier.Unlock()
	sc.mutex.Lock()
	defer sc.mutex.Unlock()
	sc.removeSelectorLocked(sel, user)
}

func (sc *SelectorCache) removeSelectorLocked(sel FQDNSelector, user CachedSelectionUser) {
	s, ok := sc.selectors[sel.String()]
	if !ok {
		return
	}
	delete(s.users, user)
	time.Sleep(opLatency) // releasing the selections' identities
	if len(s.users) == 0 {
		sc.localIdentityNotifier.UnregisterForIdentityUpdatesLocked(sel)
		delete(sc.selectors, sel.String())
	}
}

type Config struct {
	UpdateSelectors func(selectorIPs map[FQDNSelector][]string) error
}

type NameManager struct {
	sync.Mutex
	config       Config
	cache        map[string][]string
	allSelectors map[FQDNSelector]struct{}
}

func NewNameManager(cfg Config) *NameManager {
	return &NameManager{config: cfg, cache: map[string][]string{}, allSelectors: map[FQDNSelector]struct{}{}}
}

func (n *NameManager) RegisterForIdentityUpdatesLocked(sel FQDNSelector) {
	n.allSelectors[sel] = struct{}{}
}

func (n *NameManager) UnregisterForIdentityUpdatesLocked(sel FQDNSelector) {
	delete(n.allSelectors, sel)
}

// UpdateGenerateDNS keeps the NameManager locked for the whole update so that
// concurrent DNS responses cannot reorder selector updates.
func (n *NameManager) UpdateGenerateDNS(lookupTime time.Time, updated map[string][]string) error {
	n.Mutex.Lock()
	defer n.Mutex.Unlock()
	for name, ips := range updated {
		n.cache[name] = ips
	}
	selectorIPs := map[FQDNSelector][]string{}
	for sel := range n.allSelectors { // regex matching of every selector
		if ips, ok := n.cache[sel.MatchName]; ok {
			sorted := append([]string(nil), ips...)
			sort.Strings(sorted)
			selectorIPs[sel] = sorted
		}
	}
	time.Sleep(opLatency)
	return n.config.UpdateSelectors(selectorIPs)
}

type Daemon struct {
	dnsNameManager *NameManager
	selectorCache  *SelectorCache
}

func (d *Daemon) updateSelectors(selectorIPs map[FQDNSelector][]string) error {
	for sel, ips := range selectorIPs {
		d.selectorCache.UpdateFQDNSelector(sel, ips)
	}
	return nil
}

type l4Filter struct{ endpointID int }

func (f *l4Filter) IdentitySelectionUpdated(sel FQDNSelector, ips []string) {
	fmt.Printf("endpoint %d: %s now selects %v\n", f.endpointID, sel, ips)
}

func main() {
	d := &Daemon{selectorCache: NewSelectorCache()}
	d.dnsNameManager = NewNameManager(Config{UpdateSelectors: d.updateSelectors})
	d.selectorCache.SetLocalIdentityNotifier(d.dnsNameManager)

	sel := FQDNSelector{MatchName: "api.github.com"}
	filter := &l4Filter{endpointID: 1029}
	d.selectorCache.AddFQDNSelector(filter, sel)

	done := make(chan struct{})
	go func() { // the CNP with toFQDNs is deleted: its L4 filter detaches
		time.Sleep(20 * time.Millisecond)
		d.selectorCache.RemoveSelector(sel, filter)
		close(done)
	}()

	// The DNS proxy saw a response for the selector's name.
	_ = d.dnsNameManager.UpdateGenerateDNS(time.Now(), map[string][]string{"api.github.com": {"140.82.112.5"}})
	<-done
	fmt.Println("done")
}
