// Project: tikv/pd (server/cluster/cluster.go, server/core/basic_cluster.go, server/config/persist_options.go), v4.0 era, 2020 (approximate).
// Bug: RaftCluster.BuryStore holds the cluster's embedded RWMutex for writing while it turns an offline store into a tombstone, and afterwards calls the exported OnStoreVersionChange to recompute the cluster version, which takes c.RLock on the same RWMutex, so pd-server hangs when a store is buried (fixed by the onStoreVersionChangeLocked variant used by callers that already hold the lock).
package main

import (
	"errors"
	"fmt"
	"sync"
)

type StoreState int

const (
	StoreStateUp StoreState = iota
	StoreStateOffline
	StoreStateTombstone
)

// semver stand-in: major.minor.patch packed into an int.
type Version int

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v/10000, v/100%100, v%100) }

type StoreInfo struct {
	id      uint64
	address string
	state   StoreState
	version Version
}

type StoreCreateOption func(s *StoreInfo)

func SetStoreState(state StoreState) StoreCreateOption {
	return func(s *StoreInfo) { s.state = state }
}

func (s *StoreInfo) Clone(opts ...StoreCreateOption) *StoreInfo {
	ns := *s
	for _, opt := range opts {
		opt(&ns)
	}
	return &ns
}

func (s *StoreInfo) IsTombstone() bool { return s.state == StoreStateTombstone }
func (s *StoreInfo) IsOffline() bool   { return s.state == StoreStateOffline }

// BasicCluster provides basic data member and interface for a tikv cluster.
type BasicCluster struct {
	sync.RWMutex
	stores map[uint64]*StoreInfo
}

func (bc *BasicCluster) GetStore(id uint64) *StoreInfo {
	bc.RLock()
	defer bc.RUnlock()
	return bc.stores[id]
}

func (bc *BasicCluster) GetStores() []*StoreInfo {
	bc.RLock()
	defer bc.RUnlock()
	out := make([]*StoreInfo, 0, len(bc.stores))
	for _, s := range bc.stores {
		out = append(out, s)
	}
	return out
}

func (bc *BasicCluster) PutStore(s *StoreInfo) {
	bc.Lock()
	defer bc.Unlock()
	bc.stores[s.id] = s
}

type PersistOptions struct {
	mu             sync.Mutex
	clusterVersion Version
}

func (o *PersistOptions) GetClusterVersion() Version {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.clusterVersion
}

func (o *PersistOptions) CASClusterVersion(old, new Version) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.clusterVersion != old {
		return false
	}
	o.clusterVersion = new
	return true
}

type RaftCluster struct {
	sync.RWMutex
	running bool
	core    *BasicCluster
	opt     *PersistOptions
	limits  map[uint64]float64
}

func (c *RaftCluster) GetStore(id uint64) *StoreInfo { return c.core.GetStore(id) }

func (c *RaftCluster) putStoreLocked(store *StoreInfo) error {
	c.core.PutStore(store)
	return nil
}

func (c *RaftCluster) RemoveStoreLimit(storeID uint64) { delete(c.limits, storeID) }

// OnStoreVersionChange changes the version of the cluster when needed.
func (c *RaftCluster) OnStoreVersionChange() {
	c.RLock()
	defer c.RUnlock()
	c.onStoreVersionChangeLocked()
}

func (c *RaftCluster) onStoreVersionChangeLocked() {
	var minVersion Version = -1
	clusterVersion := c.opt.GetClusterVersion()
	for _, s := range c.core.GetStores() {
		if s.IsTombstone() {
			continue
		}
		if minVersion < 0 || s.version < minVersion {
			minVersion = s.version
		}
	}
	if minVersion > clusterVersion && c.opt.CASClusterVersion(clusterVersion, minVersion) {
		fmt.Println("cluster version changed", clusterVersion, "->", minVersion)
	}
}

// BuryStore marks a store as tombstone in cluster.
// State transition: Offline -> Tombstone.
func (c *RaftCluster) BuryStore(storeID uint64, force bool) error {
	c.Lock()
	defer c.Unlock()

	store := c.GetStore(storeID)
	if store == nil {
		return errors.New("store not found")
	}
	if store.IsTombstone() {
		return nil
	}
	if !store.IsOffline() && !force {
		return errors.New("store is up, cannot bury")
	}
	newStore := store.Clone(SetStoreState(StoreStateTombstone))
	fmt.Println("store has been Tombstone", storeID, newStore.address)
	err := c.putStoreLocked(newStore)
	if err == nil {
		// clean up the residual information.
		c.RemoveStoreLimit(storeID)
		c.OnStoreVersionChange()
	}
	return err
}

func main() {
	c := &RaftCluster{
		running: true,
		core:    &BasicCluster{stores: map[uint64]*StoreInfo{}},
		opt:     &PersistOptions{clusterVersion: 30100},
		limits:  map[uint64]float64{},
	}
	c.core.PutStore(&StoreInfo{id: 1, address: "tikv-1:20160", version: 40000})
	c.core.PutStore(&StoreInfo{id: 2, address: "tikv-2:20160", version: 40000})
	c.core.PutStore(&StoreInfo{id: 3, address: "tikv-3:20160", version: 30100, state: StoreStateOffline})
	for id := range c.core.stores {
		c.limits[id] = 15
	}

	// pd-ctl store remove 3 finished, the region count dropped to zero and
	// the store heartbeat path buries it.
	if err := c.BuryStore(3, false); err != nil {
		fmt.Println("bury store:", err)
	}
	fmt.Println("cluster version", c.opt.GetClusterVersion())
}
