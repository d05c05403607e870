// Fixed twin (getRegionByKeyNoLock, as in pingcap/tidb#16826).
// Project: pingcap/tidb v4.0 (store/mockstore/mocktikv, the in-process TiKV/PD used by mocktikv
// stores, unit tests and tidb-server --store=mocktikv).
// Files: store/mockstore/mocktikv/cluster.go (Cluster.GetPrevRegionByKey, Cluster.GetRegionByKey,
// Cluster.Split), store/mockstore/mocktikv/pd.go (pdClient.GetPrevRegion), store/tikv/region_cache.go
// (RegionCache.LocateEndKey, findRegionByKey, loadRegion), store/tikv/scan.go (reverse Scanner).
// PR: pingcap/tidb#16826 "store: Add getRegionByKeyNoLock to avoid double-lock".
//
// The mock cluster embeds a sync.RWMutex. GetPrevRegionByKey read-locks it and, to find the region
// that contains the key, calls the exported GetRegionByKey, which read-locks it again. A reverse scan
// (ORDER BY ... DESC, or IterReverse) locates regions by their end key, so the region cache asks the
// PD client for the previous region, and the mock PD client forwards to GetPrevRegionByKey. When a
// region split (a SPLIT TABLE statement, or the mock RPC handler splitting a region) calls
// Cluster.Split while the reverse scan sits between the two read locks, Split's Lock waits for the
// first read lock and the nested RLock queues behind the waiting writer. The fix adds
// getRegionByKeyNoLock, used by both GetRegionByKey and GetPrevRegionByKey under their own lock.
package main

import (
	"bytes"
	"fmt"
	"sync"
	"time"
)

type Region struct {
	Id       uint64
	StartKey []byte
	EndKey   []byte
}

type Peer struct{ Id, StoreId uint64 }

type mockRegion struct {
	Meta   *Region
	leader *Peer
}

// Cluster simulates a TiKV cluster for the mock store.
type Cluster struct {
	sync.RWMutex
	regions map[uint64]*mockRegion
	nextID  uint64

	// window stands for the time the scheduler may leave a reader between its
	// two read locks; the reproduction lengthens it.
	window time.Duration
}

func regionContains(start, end, key []byte) bool {
	return bytes.Compare(start, key) <= 0 && (len(end) == 0 || bytes.Compare(key, end) < 0)
}

// GetRegionByKey returns the Region and its leader whose range contains the key.
func (c *Cluster) GetRegionByKey(key []byte) (*Region, *Peer) {
	c.RLock()
	defer c.RUnlock()
	return c.getRegionByKeyNoLock(key)
}

func (c *Cluster) getRegionByKeyNoLock(key []byte) (*Region, *Peer) {
	for _, r := range c.regions {
		if regionContains(r.Meta.StartKey, r.Meta.EndKey, key) {
			meta := *r.Meta
			return &meta, r.leader
		}
	}
	return nil, nil
}

// GetPrevRegionByKey returns the previous Region and its leader whose range contains the key.
func (c *Cluster) GetPrevRegionByKey(key []byte) (*Region, *Peer) {
	c.RLock()
	defer c.RUnlock()
	time.Sleep(c.window)
	currentRegion, _ := c.getRegionByKeyNoLock(key)
	if len(currentRegion.StartKey) == 0 {
		return nil, nil
	}
	for _, r := range c.regions {
		if bytes.Equal(r.Meta.EndKey, currentRegion.StartKey) {
			meta := *r.Meta
			return &meta, r.leader
		}
	}
	return nil, nil
}

// Split splits a Region at the key and creates a new Region.
func (c *Cluster) Split(regionID uint64, key []byte) {
	c.Lock()
	defer c.Unlock()
	old := c.regions[regionID]
	c.nextID++
	newRegion := &mockRegion{Meta: &Region{Id: c.nextID, StartKey: key, EndKey: old.Meta.EndKey}, leader: old.leader}
	old.Meta.EndKey = key
	c.regions[newRegion.Meta.Id] = newRegion
}

// PDClient is the part of pd.Client the region cache uses.
type PDClient interface {
	GetRegion(key []byte) (*Region, *Peer, error)
	GetPrevRegion(key []byte) (*Region, *Peer, error)
}

type pdClient struct{ cluster *Cluster }

func (c *pdClient) GetRegion(key []byte) (*Region, *Peer, error) {
	r, p := c.cluster.GetRegionByKey(key)
	return r, p, nil
}

func (c *pdClient) GetPrevRegion(key []byte) (*Region, *Peer, error) {
	r, p := c.cluster.GetPrevRegionByKey(key)
	return r, p, nil
}

type KeyLocation struct {
	Region   uint64
	StartKey []byte
	EndKey   []byte
}

// RegionCache caches Regions loaded from PD.
type RegionCache struct {
	pdClient PDClient
	mu       sync.RWMutex
	regions  map[uint64]*Region
}

// LocateEndKey searches for the region and range that the key is located in;
// unlike LocateKey, start key of a region is exclusive and end key is inclusive.
func (c *RegionCache) LocateEndKey(key []byte) (*KeyLocation, error) {
	r, err := c.findRegionByKey(key, true)
	if err != nil {
		return nil, err
	}
	return &KeyLocation{Region: r.Id, StartKey: r.StartKey, EndKey: r.EndKey}, nil
}

func (c *RegionCache) findRegionByKey(key []byte, isEndKey bool) (*Region, error) {
	c.mu.RLock()
	for _, r := range c.regions {
		if isEndKey && bytes.Compare(r.StartKey, key) < 0 && (len(r.EndKey) == 0 || bytes.Compare(key, r.EndKey) <= 0) {
			c.mu.RUnlock()
			return r, nil
		}
	}
	c.mu.RUnlock()
	r, err := c.loadRegion(key, isEndKey)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.regions[r.Id] = r
	c.mu.Unlock()
	return r, nil
}

func (c *RegionCache) loadRegion(key []byte, isEndKey bool) (*Region, error) {
	var meta *Region
	var err error
	if isEndKey {
		meta, _, err = c.pdClient.GetPrevRegion(key)
	} else {
		meta, _, err = c.pdClient.GetRegion(key)
	}
	if err == nil && meta == nil {
		err = fmt.Errorf("region not found for key %q", key)
	}
	return meta, err
}

func main() {
	cluster := &Cluster{regions: map[uint64]*mockRegion{}, nextID: 2}
	cluster.regions[1] = &mockRegion{Meta: &Region{Id: 1, EndKey: []byte("t_100")}, leader: &Peer{1, 1}}
	cluster.regions[2] = &mockRegion{Meta: &Region{Id: 2, StartKey: []byte("t_100")}, leader: &Peer{2, 1}}
	cache := &RegionCache{pdClient: &pdClient{cluster: cluster}, regions: map[uint64]*Region{}}
	cluster.window = 100 * time.Millisecond

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // SELECT ... ORDER BY id DESC: the reverse scanner locates the region ending at t_100
		defer wg.Done()
		loc, err := cache.LocateEndKey([]byte("t_100"))
		fmt.Println("reverse scan located", loc, err)
	}()
	time.Sleep(30 * time.Millisecond)
	go func() { // SPLIT TABLE t BETWEEN ...: the mock RPC handler splits region 1
		defer wg.Done()
		cluster.Split(1, []byte("t_050"))
	}()
	wg.Wait()
}
