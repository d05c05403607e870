// Project: tikv/pd (server/cluster/cluster.go RaftCluster.runBackgroundJobs, collectMetrics, collectClusterMetrics, HandleStoreHeartbeat), v5.2/v5.3, November 2021 (issue #4354, fixed by PR #4355 "cluster: fix the unreleased RLock issue").
// Bug: collectClusterMetrics read-locks the RaftCluster's embedded RWMutex and returns early when c.regionStats is nil without calling RUnlock, so the background-jobs goroutine leaks a read lock on every tick. The next store heartbeat queues for c.Lock() behind the leaked read lock, and on the following tick the same background goroutine blocks in c.RLock() behind that writer, so the goroutine that holds the read lock waits for the writer that waits for it and the whole cluster (heartbeats, API, scheduling) stops. The fix releases the read lock before returning.
package b102pdmetricsrlock

import (
	"sync"
	"testing"
	"time"
)

type StoreInfo struct {
	id            uint64
	up            bool
	lastHeartbeat time.Time
	regionCount   int
}

type BasicCluster struct {
	sync.RWMutex
	stores map[uint64]*StoreInfo
}

func (bc *BasicCluster) GetStores() []*StoreInfo {
	bc.RLock()
	defer bc.RUnlock()
	stores := make([]*StoreInfo, 0, len(bc.stores))
	for _, s := range bc.stores {
		stores = append(stores, s)
	}
	return stores
}

func (bc *BasicCluster) PutStore(s *StoreInfo) {
	bc.Lock()
	defer bc.Unlock()
	bc.stores[s.id] = s
}

type RegionStatistics struct{ stats map[string]int }

func (r *RegionStatistics) Collect() {}

type LabelStatistics struct{}

func (l *LabelStatistics) Collect() {}

type HotStat struct {
	mu    sync.Mutex
	flows map[uint64]uint64
}

func (h *HotStat) Observe(storeID uint64, written uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.flows[storeID] += written
}

func (h *HotStat) CollectMetrics() {
	h.mu.Lock()
	defer h.mu.Unlock()
}

type RaftCluster struct {
	sync.RWMutex
	running         bool
	core            *BasicCluster
	labelLevelStats *LabelStatistics
	regionStats     *RegionStatistics
	hotStat         *HotStat
	quit            chan struct{}
}

func (c *RaftCluster) runBackgroundJobs(ticker <-chan time.Time) {
	for {
		select {
		case <-c.quit:
			return
		case <-ticker:
			c.checkStores()
			c.collectMetrics()
		}
	}
}

func (c *RaftCluster) checkStores() {
	for _, store := range c.core.GetStores() {
		if store.up {
			continue
		}
		// An offline store without regions would be buried here.
	}
}

func (c *RaftCluster) collectMetrics() {
	upStores := 0
	for _, s := range c.core.GetStores() {
		if s.up {
			upStores++
		}
	}
	c.collectClusterMetrics()
}

func (c *RaftCluster) collectClusterMetrics() {
	c.RLock()
	if c.regionStats == nil {
		return
	}
	c.regionStats.Collect()
	c.labelLevelStats.Collect()
	hotStat := c.hotStat
	c.RUnlock()
	// collect hot cache metrics
	hotStat.CollectMetrics()
}

// HandleStoreHeartbeat updates the store status.
func (c *RaftCluster) HandleStoreHeartbeat(storeID uint64, written uint64) {
	c.Lock()
	defer c.Unlock()
	c.core.PutStore(&StoreInfo{id: storeID, up: true, lastHeartbeat: time.Now()})
	c.hotStat.Observe(storeID, written)
}

func TestB102pdmetricsrlock(t *testing.T) {
	c := &RaftCluster{
		core:            &BasicCluster{stores: map[uint64]*StoreInfo{1: {id: 1, up: true}}},
		labelLevelStats: &LabelStatistics{},
		hotStat:         &HotStat{flows: map[uint64]uint64{}},
		quit:            make(chan struct{}),
	}
	ticker := make(chan time.Time)
	jobsDone := make(chan struct{})
	go func() {
		c.runBackgroundJobs(ticker)
		close(jobsDone)
	}()

	ticker <- time.Now() // first metrics collection, region statistics not ready yet
	time.Sleep(50 * time.Millisecond)
	heartbeatDone := make(chan struct{})
	go func() { // a TiKV store heartbeat
		c.HandleStoreHeartbeat(1, 4096)
		close(heartbeatDone)
	}()
	time.Sleep(50 * time.Millisecond)
	ticker <- time.Now() // next background tick

	<-heartbeatDone
	close(c.quit)
	<-jobsDone
}
