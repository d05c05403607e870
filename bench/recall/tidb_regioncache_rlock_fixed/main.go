// Project: TiDB (store/tikv, later tikv/client-go), component: RegionCache.
// Bug (as remembered): RegionCache.GetTiKVRPCContext held c.mu.RLock() while
// resolving the store address of the region's leader, and the helper it used
// (GetStoreByID, also an exported entry point) took c.mu.RLock() a second
// time. When a concurrent writer (OnRegionEpochNotMatch / InvalidateCachedRegion
// dropping stale regions) queued c.mu.Lock() between the two RLocks, Go's
// RWMutex blocks the second RLock behind the pending writer while the writer
// waits for the first RLock -> every KV request and the region-error handler
// hung. Fixed by having the inner path use a lock-free "...Locked" helper.
package main

import (
	"fmt"
	"sync"
	"time"
)

type RegionVerID struct {
	id      uint64
	confVer uint64
	ver     uint64
}

type Store struct {
	storeID uint64
	addr    string
}

type Region struct {
	VerID    RegionVerID
	StartKey string
	EndKey   string
	leader   uint64 // store id
}

type RPCContext struct {
	Region RegionVerID
	Addr   string
}

type RegionCache struct {
	mu struct {
		sync.RWMutex
		regions map[RegionVerID]*Region
		stores  map[uint64]*Store
	}
}

func NewRegionCache() *RegionCache {
	c := &RegionCache{}
	c.mu.regions = make(map[RegionVerID]*Region)
	c.mu.stores = make(map[uint64]*Store)
	return c
}

// GetStoreByID is used by the RPC client and by GetTiKVRPCContext.
func (c *RegionCache) GetStoreByID(id uint64) *Store {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.getStoreByIDLocked(id)
}

// getStoreByIDLocked must be called with c.mu held (read or write).
func (c *RegionCache) getStoreByIDLocked(id uint64) *Store {
	return c.mu.stores[id]
}

func (c *RegionCache) getCachedRegion(id RegionVerID) *Region {
	return c.mu.regions[id]
}

// GetTiKVRPCContext returns the RPC context of the region's current leader.
func (c *RegionCache) GetTiKVRPCContext(id RegionVerID) (*RPCContext, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	region := c.getCachedRegion(id)
	if region == nil {
		return nil, nil
	}
	store := c.getStoreByIDLocked(region.leader) // fix: no recursive RLock
	if store == nil {
		return nil, fmt.Errorf("store %d not found", region.leader)
	}
	return &RPCContext{Region: id, Addr: store.addr}, nil
}

// OnRegionEpochNotMatch drops the stale region and inserts the new ones.
func (c *RegionCache) OnRegionEpochNotMatch(ctx *RPCContext, currentRegions []*Region) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.mu.regions, ctx.Region)
	for _, r := range currentRegions {
		c.mu.regions[r.VerID] = r
	}
}

func (c *RegionCache) insertRegion(r *Region) {
	c.mu.Lock()
	c.mu.regions[r.VerID] = r
	c.mu.Unlock()
}

func (c *RegionCache) insertStore(s *Store) {
	c.mu.Lock()
	c.mu.stores[s.storeID] = s
	c.mu.Unlock()
}

// ---- RegionRequestSender ----

type RegionRequestSender struct {
	regionCache *RegionCache
}

func (s *RegionRequestSender) SendReq(id RegionVerID) {
	for attempt := 0; attempt < 3; attempt++ {
		ctx, err := s.regionCache.GetTiKVRPCContext(id)
		if err != nil || ctx == nil {
			return
		}
		// pretend TiKV answered with EpochNotMatch on the first attempt
		if attempt == 0 {
			newID := RegionVerID{id: id.id, confVer: id.confVer, ver: id.ver + 1}
			s.regionCache.OnRegionEpochNotMatch(ctx, []*Region{{VerID: newID, leader: 1}})
			id = newID
			continue
		}
		fmt.Println("sent to", ctx.Addr)
		return
	}
}

func main() {
	cache := NewRegionCache()
	cache.insertStore(&Store{storeID: 1, addr: "tikv-1:20160"})
	for i := uint64(1); i <= 8; i++ {
		cache.insertRegion(&Region{VerID: RegionVerID{id: i, confVer: 1, ver: 1}, leader: 1})
	}
	var wg sync.WaitGroup
	for i := uint64(1); i <= 8; i++ {
		wg.Add(1)
		go func(id uint64) {
			defer wg.Done()
			sender := &RegionRequestSender{regionCache: cache}
			sender.SendReq(RegionVerID{id: id, confVer: 1, ver: 1})
		}(i)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(200 * time.Millisecond):
	}
}
