// Project: tikv/pd (the TiDB/TiKV placement driver), master towards v6.5,
// December 2022.
// Files/functions: server/core/region.go: RegionsInfo.AtomicCheckAndPutRegion,
// PreCheckPutRegion, GetRelevantRegions, GetRegionByKey, setRegionLocked,
// UpdateSubTree, check; server/core/basic_cluster.go (BasicCluster embeds
// *RegionsInfo); server/cluster/cluster.go: RaftCluster.processRegionHeartbeat
// with its "concurrentRegionHeartbeat" failpoint.
// Issue: tikv/pd#5757 "Deadlock problem in `AtomicCheckAndPutRegion`" (and
// #5755), fixed by PR #5758 "*: fix `AtomicCheckAndPutRegion` deadlock".
//
// The region cache was split into a tree lock (t) and a sub-tree lock (st).
// AtomicCheckAndPutRegion takes r.t.Lock(), re-checks the heartbeat against
// the cached origin and the overlapping regions, and on success releases t
// before updating the sub trees. When the re-check finds the region stale it
// returns the error without releasing r.t. That is exactly what happens when
// two regions merge and their heartbeats race: the source region's heartbeat
// passes PreCheckPutRegion, the target's newer heartbeat is applied first,
// and the source's AtomicCheckAndPutRegion then sees an overlap with a higher
// version. From then on every reader of the region tree (GetRegionByKey,
// PreCheckPutRegion of the next heartbeat, scheduling) blocks on r.t.RLock
// and PD stops processing heartbeats.
//
// The fix adds r.t.Unlock() before returning the error.
package main

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// ---- failpoint (reduced) ----

var failpoints sync.Map

func failpointEnable(name string)  { failpoints.Store(name, true) }
func failpointDisable(name string) { failpoints.Delete(name) }
func failpointInject(name string, fn func()) {
	if _, on := failpoints.Load(name); on {
		fn()
	}
}

// ---- metapb ----

type RegionEpoch struct{ ConfVer, Version uint64 }

type Region struct {
	Id               uint64
	StartKey, EndKey string // "" as EndKey means +inf
	RegionEpoch      *RegionEpoch
}

// ---- server/core ----

type RegionInfo struct{ meta *Region }

func (r *RegionInfo) GetID() uint64                { return r.meta.Id }
func (r *RegionInfo) GetStartKey() string          { return r.meta.StartKey }
func (r *RegionInfo) GetEndKey() string            { return r.meta.EndKey }
func (r *RegionInfo) GetRegionEpoch() *RegionEpoch { return r.meta.RegionEpoch }
func (r *RegionInfo) GetMeta() *Region             { return r.meta }

func less(a, b string) bool { return b == "" || a < b }

type regionItem struct{ *RegionInfo }

type regionTree struct{ items []*regionItem }

func (t *regionTree) overlaps(item *regionItem) []*regionItem {
	var res []*regionItem
	for _, it := range t.items {
		if less(it.GetStartKey(), item.GetEndKey()) && less(item.GetStartKey(), it.GetEndKey()) {
			res = append(res, it)
		}
	}
	return res
}

func (t *regionTree) update(item *regionItem, overlaps []*regionItem) []*RegionInfo {
	var removed []*RegionInfo
	kept := t.items[:0]
	for _, it := range t.items {
		if slices.Contains(overlaps, it) {
			removed = append(removed, it.RegionInfo)
		} else {
			kept = append(kept, it)
		}
	}
	t.items = append(kept, item)
	return removed
}

func (t *regionTree) search(key string) *RegionInfo {
	for _, it := range t.items {
		if it.GetStartKey() <= key && less(key, it.GetEndKey()) {
			return it.RegionInfo
		}
	}
	return nil
}

var errRegionIsStale = func(region, origin *Region) error {
	return fmt.Errorf("region is stale: region %v origin %v", region.RegionEpoch, origin.RegionEpoch)
}

func check(region, origin *RegionInfo, overlaps []*regionItem) error {
	for _, item := range overlaps {
		if region.GetRegionEpoch().Version < item.GetRegionEpoch().Version {
			return errRegionIsStale(region.GetMeta(), item.GetMeta())
		}
	}
	if origin == nil {
		return nil
	}
	r, o := region.GetRegionEpoch(), origin.GetRegionEpoch()
	if r.Version < o.Version || r.ConfVer < o.ConfVer {
		return errRegionIsStale(region.GetMeta(), origin.GetMeta())
	}
	return nil
}

type RegionsInfo struct {
	t          sync.RWMutex
	tree       *regionTree
	regions    map[uint64]*regionItem
	st         sync.RWMutex
	subRegions map[uint64]*regionItem
}

func NewRegionsInfo() *RegionsInfo {
	return &RegionsInfo{tree: &regionTree{}, regions: map[uint64]*regionItem{}, subRegions: map[uint64]*regionItem{}}
}

func (r *RegionsInfo) getRegionLocked(regionID uint64) *RegionInfo {
	if item := r.regions[regionID]; item != nil {
		return item.RegionInfo
	}
	return nil
}

func (r *RegionsInfo) setRegionLocked(region *RegionInfo, ol []*regionItem) (*RegionInfo, []*RegionInfo, bool) {
	origin := r.getRegionLocked(region.GetID())
	rangeChanged := origin == nil || origin.GetStartKey() != region.GetStartKey() || origin.GetEndKey() != region.GetEndKey()
	item := &regionItem{RegionInfo: region}
	overlaps := r.tree.update(item, ol)
	for _, o := range overlaps {
		delete(r.regions, o.GetID())
	}
	r.regions[region.GetID()] = item
	return origin, overlaps, rangeChanged
}

// UpdateSubTree updates the per-store sub trees.
func (r *RegionsInfo) UpdateSubTree(region, origin *RegionInfo, overlaps []*RegionInfo, rangeChanged bool) {
	r.st.Lock()
	defer r.st.Unlock()
	for _, o := range overlaps {
		delete(r.subRegions, o.GetID())
	}
	r.subRegions[region.GetID()] = &regionItem{RegionInfo: region}
}

// GetRelevantRegions returns the relevant regions for a given region.
func (r *RegionsInfo) GetRelevantRegions(region *RegionInfo) (origin *RegionInfo, overlaps []*regionItem) {
	r.t.RLock()
	defer r.t.RUnlock()
	origin = r.getRegionLocked(region.GetID())
	if origin == nil || origin.GetStartKey() != region.GetStartKey() || origin.GetEndKey() != region.GetEndKey() {
		overlaps = r.tree.overlaps(&regionItem{RegionInfo: region})
	}
	return
}

// PreCheckPutRegion checks if the region is valid to put.
func (r *RegionsInfo) PreCheckPutRegion(region *RegionInfo) (*RegionInfo, []*regionItem, error) {
	origin, overlaps := r.GetRelevantRegions(region)
	err := check(region, origin, overlaps)
	return origin, overlaps, err
}

// AtomicCheckAndPutRegion checks if the region is valid to put, if valid then put.
func (r *RegionsInfo) AtomicCheckAndPutRegion(region *RegionInfo) ([]*RegionInfo, error) {
	r.t.Lock()
	var ols []*regionItem
	origin := r.getRegionLocked(region.GetID())
	if origin == nil || origin.GetStartKey() != region.GetStartKey() || origin.GetEndKey() != region.GetEndKey() {
		ols = r.tree.overlaps(&regionItem{RegionInfo: region})
	}
	err := check(region, origin, ols)
	if err != nil {
		return nil, err
	}
	origin, overlaps, rangeChanged := r.setRegionLocked(region, ols)
	r.t.Unlock()
	r.UpdateSubTree(region, origin, overlaps, rangeChanged)
	return overlaps, nil
}

// GetRegionByKey searches RegionInfo from regionTree.
func (r *RegionsInfo) GetRegionByKey(regionKey string) *RegionInfo {
	r.t.RLock()
	defer r.t.RUnlock()
	return r.tree.search(regionKey)
}

type BasicCluster struct {
	*RegionsInfo
}

// ---- server/cluster ----

type RaftCluster struct {
	core *BasicCluster
}

func (c *RaftCluster) processRegionHeartbeat(region *RegionInfo) error {
	origin, _, err := c.core.PreCheckPutRegion(region)
	if err != nil {
		return err
	}
	saveCache := origin == nil || region.GetRegionEpoch().Version != origin.GetRegionEpoch().Version ||
		region.GetRegionEpoch().ConfVer != origin.GetRegionEpoch().ConfVer
	failpointInject("concurrentRegionHeartbeat", func() {
		time.Sleep(300 * time.Millisecond)
	})
	if saveCache {
		// To prevent a concurrent heartbeat of another region from overriding the
		// up-to-date region info by a stale one, check its validation again here.
		if _, err := c.core.AtomicCheckAndPutRegion(region); err != nil {
			return err
		}
	}
	return nil
}

func newRegion(id uint64, start, end string, version uint64) *RegionInfo {
	return &RegionInfo{meta: &Region{Id: id, StartKey: start, EndKey: end, RegionEpoch: &RegionEpoch{ConfVer: 1, Version: version}}}
}

func main() {
	c := &RaftCluster{core: &BasicCluster{RegionsInfo: NewRegionsInfo()}}
	// Two regions after a split.
	for _, r := range []*RegionInfo{newRegion(1, "", "m", 1), newRegion(2, "m", "", 1)} {
		if err := c.processRegionHeartbeat(r); err != nil {
			panic(err)
		}
	}

	// Merge the regions: both report the whole key space, the target newer.
	source := newRegion(1, "", "", 2)
	target := newRegion(2, "", "", 3)

	var wg sync.WaitGroup
	wg.Add(1)
	failpointEnable("concurrentRegionHeartbeat")
	go func() {
		defer wg.Done()
		fmt.Println("source heartbeat:", c.processRegionHeartbeat(source))
	}()
	time.Sleep(100 * time.Millisecond)
	failpointDisable("concurrentRegionHeartbeat")
	fmt.Println("target heartbeat:", c.processRegionHeartbeat(target))
	wg.Wait()

	got := c.core.GetRegionByKey("")
	if got == nil || got.GetID() != target.GetID() {
		fmt.Println("unexpected region")
		return
	}
	fmt.Println("region for key \"\":", got.GetID(), "version", got.GetRegionEpoch().Version)
}
