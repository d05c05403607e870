// Project: dapr/dapr (pkg/actors placement)
// Bug: (reconstruction) applying a placement table update takes placementTableLock
//      for writing and, still holding it, drains the active actors that no longer
//      hash to this host. The drain path resolved each actor with
//      lookupActor(actorType, actorID, true); the constant `true` makes the helper
//      RLock placementTableLock again, so the sidecar deadlocked on its own table
//      lock and every later actor invocation (LookupActor) queued behind it.
// Fix: the drain path passes lock=false because the caller already holds the lock.

package dapractors_fixed

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	lockOperation   = "lock"
	unlockOperation = "unlock"
	updateOperation = "update"
)

// Consistent is a (much simplified) consistent hash ring for one actor type.
type Consistent struct{ hosts []string }

func NewConsistentHash(hosts ...string) *Consistent {
	h := append([]string(nil), hosts...)
	sort.Strings(h)
	return &Consistent{hosts: h}
}

func (c *Consistent) Get(key string) (string, error) {
	if len(c.hosts) == 0 {
		return "", fmt.Errorf("no hosts added")
	}
	f := fnv.New32a()
	f.Write([]byte(key))
	return c.hosts[int(f.Sum32())%len(c.hosts)], nil
}

type PlacementTables struct {
	Version string
	Entries map[string]*Consistent
}

type activeActorsTable struct {
	mu     sync.Mutex
	actors map[string]struct{} // key: actorType||actorID
}

func (t *activeActorsTable) keys() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	keys := make([]string, 0, len(t.actors))
	for k := range t.actors {
		keys = append(keys, k)
	}
	return keys
}

type actorPlacement struct {
	appID               string
	hostAddress         string
	actorTypes          []string
	operationUpdateLock sync.Mutex
	placementTableLock  sync.RWMutex
	placementTables     *PlacementTables
	activeActors        *activeActorsTable
	deactivateFn        func(actorType, actorID string)
}

// LookupActor resolves the host address of the actor.
func (p *actorPlacement) LookupActor(actorType, actorID string) (string, error) {
	return p.lookupActor(actorType, actorID, true)
}

func (p *actorPlacement) lookupActor(actorType, actorID string, lock bool) (string, error) {
	if lock {
		p.placementTableLock.RLock()
		defer p.placementTableLock.RUnlock()
	}
	if p.placementTables == nil {
		return "", fmt.Errorf("placement tables are not set")
	}
	t := p.placementTables.Entries[actorType]
	if t == nil {
		return "", fmt.Errorf("did not find address for actor %s/%s", actorType, actorID)
	}
	return t.Get(actorID)
}

func (p *actorPlacement) onPlacementOrder(operation string, tables *PlacementTables) {
	p.operationUpdateLock.Lock()
	defer p.operationUpdateLock.Unlock()
	switch operation {
	case lockOperation, unlockOperation:
		// dissemination barrier; nothing to do for a single host
	case updateOperation:
		p.updatePlacements(tables)
	}
}

func (p *actorPlacement) updatePlacements(in *PlacementTables) {
	p.placementTableLock.Lock()
	defer p.placementTableLock.Unlock()
	if p.placementTables != nil && in.Version == p.placementTables.Version {
		return
	}
	p.placementTables = in
	p.drainRebalancedActors()
}

// drainRebalancedActors deactivates actors that moved to another host.
func (p *actorPlacement) drainRebalancedActors() {
	for _, key := range p.activeActors.keys() {
		actorType, actorID, _ := strings.Cut(key, "||")
		if p.isActorLocal(actorType, actorID) {
			continue
		}
		p.deactivateFn(actorType, actorID)
	}
}

func (p *actorPlacement) isActorLocal(actorType, actorID string) bool {
	host, err := p.lookupActor(actorType, actorID, false)
	return err == nil && host == p.hostAddress
}

func TestPlacementUpdateDrainsActors(t *testing.T) {
	var mu sync.Mutex
	var deactivated []string
	p := &actorPlacement{
		appID: "cart", hostAddress: "10.0.0.1:50002", actorTypes: []string{"CartActor"},
		activeActors: &activeActorsTable{actors: map[string]struct{}{
			"CartActor||alice": {}, "CartActor||bob": {}, "CartActor||carol": {},
		}},
		deactivateFn: func(actorType, actorID string) {
			mu.Lock()
			deactivated = append(deactivated, actorType+"/"+actorID)
			mu.Unlock()
		},
	}
	p.placementTables = &PlacementTables{Version: "1",
		Entries: map[string]*Consistent{"CartActor": NewConsistentHash("10.0.0.1:50002")}}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // placement stream: a second sidecar joined
		defer wg.Done()
		p.onPlacementOrder(lockOperation, nil)
		p.onPlacementOrder(updateOperation, &PlacementTables{Version: "2",
			Entries: map[string]*Consistent{"CartActor": NewConsistentHash("10.0.0.1:50002", "10.0.0.2:50002")}})
		p.onPlacementOrder(unlockOperation, nil)
	}()
	go func() { // actor invocation arriving during the update
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		if _, err := p.LookupActor("CartActor", "alice"); err != nil {
			t.Error(err)
		}
	}()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("deactivated %v", deactivated)
}
