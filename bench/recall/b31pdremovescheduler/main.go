// Project: tikv/pd (server/cluster/cluster.go, server/cluster/coordinator.go,
// server/schedulers/hot_region.go), v4.0 era
// Issue: tikv/pd #2641 "deadlock when deleting scheduler"; fixed by PR #2625
// "coordinator: fix the issue caused a deadlock when deleting scheduler"
// (cherry-picked to release-4.0 as #2637).
//
// Bug: three RWMutexes, each embedded in its struct, form a cycle through
// interfaces:
//   - goroutine 1 (API: delete a scheduler) runs RaftCluster.RemoveScheduler,
//     which write-locks the cluster and calls coordinator.removeScheduler,
//     whose c.Lock() (line 305) waits for the coordinator;
//   - goroutine 2 (background metrics) runs coordinator.collectHotSpotMetrics,
//     which read-locks the coordinator for its whole body and asks the hot
//     region scheduler, reached as s.Scheduler.(hasHotStatus), for its status:
//     GetHotWriteStatus read-locks the scheduler (line 196);
//   - goroutine 3 (the scheduler's run loop) runs hotScheduler.Schedule, which
//     write-locks the scheduler in dispatch and, in prepareForBalance, asks the
//     cluster through the opt.Cluster interface for its store statistics:
//     RaftCluster.GetStoresStats read-locks the cluster (line 389).
//
// cluster(W) -> coordinator, coordinator(R) -> hotScheduler, hotScheduler(W)
// -> cluster: all three wait forever and PD stops serving.
// The fix makes collectHotSpotMetrics release the coordinator's read lock
// once it has looked the scheduler up, before calling into it.
//
// The reproduction pauses goroutines 2 and 3 after their first lock with
// failpoints (PD uses pingcap/failpoint for the same purpose) and releases
// them once goroutine 1 holds the cluster lock.
package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"time"
)

// --- failpoint (pingcap/failpoint.Inject, enabled by the harness) ----------

var failpoints = map[string]func(){}

func failpointInject(name string) {
	if fn, ok := failpoints[name]; ok {
		fn()
	}
}

// --- core / statistics --------------------------------------------------------

type StoreInfo struct {
	id      uint64
	address string
}

func (s *StoreInfo) GetID() uint64      { return s.id }
func (s *StoreInfo) GetAddress() string { return s.address }

// BasicCluster provides basic data member and interface for a tikv cluster.
type BasicCluster struct {
	sync.RWMutex
	Stores map[uint64]*StoreInfo
}

func (bc *BasicCluster) GetStores() []*StoreInfo {
	bc.RLock()
	defer bc.RUnlock()
	stores := make([]*StoreInfo, 0, len(bc.Stores))
	for _, s := range bc.Stores {
		stores = append(stores, s)
	}
	return stores
}

type StoresStats struct {
	rollingStoresStats map[uint64]float64
}

type HotPeersStat struct {
	TotalBytesRate float64
	Count          int
}

type StoreHotPeersInfos struct {
	AsPeer   map[uint64]*HotPeersStat
	AsLeader map[uint64]*HotPeersStat
}

type Operator struct{ desc string }

// --- opt.Cluster / schedule.Scheduler --------------------------------------

// Cluster is opt.Cluster: the cluster as the schedulers see it.
type Cluster interface {
	GetStores() []*StoreInfo
	GetStoresStats() *StoresStats
}

// Scheduler is schedule.Scheduler.
type Scheduler interface {
	GetName() string
	GetType() string
	GetMinInterval() time.Duration
	Schedule(cluster Cluster) []*Operator
	IsScheduleAllowed(cluster Cluster) bool
}

// --- schedulers ---------------------------------------------------------------

const HotRegionName = "balance-hot-region-scheduler"

type rwType int

const (
	write rwType = iota
	read
)

type storeLoadDetail struct {
	LoadPred float64
}

type hotScheduler struct {
	name string
	sync.RWMutex
	types []rwType
	r     *rand.Rand

	// temporary states but exported to API or metrics
	stLoadInfos map[rwType]map[uint64]*storeLoadDetail
}

func newHotScheduler() *hotScheduler {
	return &hotScheduler{
		name:        HotRegionName,
		types:       []rwType{write, read},
		r:           rand.New(rand.NewSource(time.Now().UnixNano())),
		stLoadInfos: map[rwType]map[uint64]*storeLoadDetail{},
	}
}

func (h *hotScheduler) GetName() string                        { return h.name }
func (h *hotScheduler) GetType() string                        { return "hot-region" }
func (h *hotScheduler) GetMinInterval() time.Duration          { return 100 * time.Millisecond }
func (h *hotScheduler) IsScheduleAllowed(cluster Cluster) bool { return true }

func (h *hotScheduler) Schedule(cluster Cluster) []*Operator {
	return h.dispatch(h.types[h.r.Int()%len(h.types)], cluster)
}

func (h *hotScheduler) dispatch(typ rwType, cluster Cluster) []*Operator {
	h.Lock()
	defer h.Unlock()

	h.prepareForBalance(cluster)

	switch typ {
	case read:
		return h.balanceHotReadRegions(cluster)
	case write:
		return h.balanceHotWriteRegions(cluster)
	}
	return nil
}

func (h *hotScheduler) prepareForBalance(cluster Cluster) {
	stores := cluster.GetStores()
	failpointInject("hotSchedulerPrepareForBalance")
	storesStat := cluster.GetStoresStats()

	for _, typ := range []rwType{write, read} {
		loads := map[uint64]*storeLoadDetail{}
		for _, s := range stores {
			loads[s.GetID()] = &storeLoadDetail{LoadPred: storesStat.rollingStoresStats[s.GetID()]}
		}
		h.stLoadInfos[typ] = loads
	}
}

func (h *hotScheduler) balanceHotReadRegions(cluster Cluster) []*Operator {
	return []*Operator{{desc: "transfer-hot-read-leader"}}
}

func (h *hotScheduler) balanceHotWriteRegions(cluster Cluster) []*Operator {
	return []*Operator{{desc: "move-hot-write-peer"}}
}

func (h *hotScheduler) GetHotReadStatus() *StoreHotPeersInfos {
	h.RLock()
	defer h.RUnlock()
	return h.hotStatusLocked(read)
}

func (h *hotScheduler) GetHotWriteStatus() *StoreHotPeersInfos {
	h.RLock()
	defer h.RUnlock()
	return h.hotStatusLocked(write)
}

func (h *hotScheduler) hotStatusLocked(typ rwType) *StoreHotPeersInfos {
	asLeader := make(map[uint64]*HotPeersStat)
	for id, detail := range h.stLoadInfos[typ] {
		asLeader[id] = &HotPeersStat{TotalBytesRate: detail.LoadPred, Count: 1}
	}
	return &StoreHotPeersInfos{AsLeader: asLeader, AsPeer: map[uint64]*HotPeersStat{}}
}

type balanceLeaderScheduler struct {
	name string
}

func (l *balanceLeaderScheduler) GetName() string                        { return l.name }
func (l *balanceLeaderScheduler) GetType() string                        { return "balance-leader" }
func (l *balanceLeaderScheduler) GetMinInterval() time.Duration          { return 10 * time.Millisecond }
func (l *balanceLeaderScheduler) IsScheduleAllowed(cluster Cluster) bool { return true }
func (l *balanceLeaderScheduler) Schedule(cluster Cluster) []*Operator {
	if len(cluster.GetStores()) < 2 {
		return nil
	}
	return []*Operator{{desc: "transfer-leader"}}
}

// --- coordinator --------------------------------------------------------------

// Hack to retrieve info from scheduler.
// TODO: remove it.
type hasHotStatus interface {
	GetHotReadStatus() *StoreHotPeersInfos
	GetHotWriteStatus() *StoreHotPeersInfos
}

type coordinator struct {
	sync.RWMutex

	wg         sync.WaitGroup
	ctx        context.Context
	cancel     context.CancelFunc
	cluster    *RaftCluster
	schedulers map[string]*scheduleController
}

func newCoordinator(ctx context.Context, cluster *RaftCluster) *coordinator {
	ctx, cancel := context.WithCancel(ctx)
	return &coordinator{
		ctx:        ctx,
		cancel:     cancel,
		cluster:    cluster,
		schedulers: make(map[string]*scheduleController),
	}
}

var hotSpotStatusGauge = map[string]float64{}

func (c *coordinator) collectHotSpotMetrics() {
	c.RLock()
	defer c.RUnlock()
	// Collects hot write region metrics.
	s, ok := c.schedulers[HotRegionName]
	if !ok {
		return
	}
	stores := c.cluster.GetStores()
	failpointInject("collectHotSpotMetrics")
	status := s.Scheduler.(hasHotStatus).GetHotWriteStatus()
	for _, s := range stores {
		storeAddress := s.GetAddress()
		stat, ok := status.AsLeader[s.GetID()]
		if ok {
			hotSpotStatusGauge[storeAddress+"_total_written_bytes_as_leader"] = stat.TotalBytesRate
		} else {
			hotSpotStatusGauge[storeAddress+"_total_written_bytes_as_leader"] = 0
		}
	}

	// Collects hot read region metrics.
	status = s.Scheduler.(hasHotStatus).GetHotReadStatus()
	for _, s := range stores {
		storeAddress := s.GetAddress()
		stat, ok := status.AsLeader[s.GetID()]
		if ok {
			hotSpotStatusGauge[storeAddress+"_total_read_bytes_as_leader"] = stat.TotalBytesRate
		} else {
			hotSpotStatusGauge[storeAddress+"_total_read_bytes_as_leader"] = 0
		}
	}
}

var errSchedulerExisted = errors.New("scheduler existed")
var errSchedulerNotFound = errors.New("scheduler not found")

func (c *coordinator) addScheduler(scheduler Scheduler) error {
	c.Lock()
	defer c.Unlock()

	if _, ok := c.schedulers[scheduler.GetName()]; ok {
		return errSchedulerExisted
	}
	s := newScheduleController(c, scheduler)
	c.schedulers[s.GetName()] = s
	return nil
}

func (c *coordinator) removeScheduler(name string) error {
	c.Lock()
	defer c.Unlock()
	if c.cluster == nil {
		return errors.New("not bootstrapped")
	}
	s, ok := c.schedulers[name]
	if !ok {
		return errSchedulerNotFound
	}

	s.Stop()
	delete(c.schedulers, name)
	return nil
}

// runScheduler is the scheduler's loop, one pass of it here.
func (c *coordinator) runScheduler(s *scheduleController) {
	defer c.wg.Done()
	if !s.AllowSchedule() {
		return
	}
	if op := s.Schedule(); len(op) > 0 {
		fmt.Println("add operator:", op[0].desc)
	}
}

// scheduleController is used to manage a scheduler to schedule.
type scheduleController struct {
	Scheduler
	cluster      *RaftCluster
	nextInterval time.Duration
	ctx          context.Context
	cancel       context.CancelFunc
}

func newScheduleController(c *coordinator, s Scheduler) *scheduleController {
	ctx, cancel := context.WithCancel(c.ctx)
	return &scheduleController{
		Scheduler:    s,
		cluster:      c.cluster,
		nextInterval: s.GetMinInterval(),
		ctx:          ctx,
		cancel:       cancel,
	}
}

func (s *scheduleController) Stop() {
	s.cancel()
}

const maxScheduleRetries = 10

func (s *scheduleController) Schedule() []*Operator {
	for i := 0; i < maxScheduleRetries; i++ {
		// If we have schedule, reset interval to the minimal interval.
		if op := s.Scheduler.Schedule(s.cluster); op != nil {
			s.nextInterval = s.Scheduler.GetMinInterval()
			return op
		}
	}
	return nil
}

func (s *scheduleController) AllowSchedule() bool {
	return s.Scheduler.IsScheduleAllowed(s.cluster)
}

// --- RaftCluster --------------------------------------------------------------

type RaftCluster struct {
	sync.RWMutex

	core        *BasicCluster
	storesStats *StoresStats
	coordinator *coordinator
}

// GetStores returns all stores in the cluster.
func (c *RaftCluster) GetStores() []*StoreInfo {
	return c.core.GetStores()
}

// GetStoresStats returns stores' statistics from cluster.
func (c *RaftCluster) GetStoresStats() *StoresStats {
	c.RLock()
	defer c.RUnlock()
	return c.storesStats
}

// RemoveScheduler removes a scheduler.
func (c *RaftCluster) RemoveScheduler(name string) error {
	c.Lock()
	defer c.Unlock()
	failpointInject("removeSchedulerClusterLocked")
	return c.coordinator.removeScheduler(name)
}

// collectMetrics is run by runBackgroundJobs on every tick; one tick here.
func (c *RaftCluster) collectMetrics() {
	c.coordinator.collectHotSpotMetrics()
}

func main() {
	cluster := &RaftCluster{
		core: &BasicCluster{Stores: map[uint64]*StoreInfo{
			1: {id: 1, address: "tikv-1:20160"},
			2: {id: 2, address: "tikv-2:20160"},
		}},
		storesStats: &StoresStats{rollingStoresStats: map[uint64]float64{1: 10, 2: 20}},
	}
	cluster.coordinator = newCoordinator(context.Background(), cluster)
	co := cluster.coordinator
	if err := co.addScheduler(newHotScheduler()); err != nil {
		panic(err)
	}
	if err := co.addScheduler(&balanceLeaderScheduler{name: "balance-leader-scheduler"}); err != nil {
		panic(err)
	}

	metricsPaused := make(chan struct{})
	schedulePaused := make(chan struct{})
	clusterLocked := make(chan struct{})
	failpoints["collectHotSpotMetrics"] = func() {
		close(metricsPaused)
		<-clusterLocked
	}
	failpoints["hotSchedulerPrepareForBalance"] = func() {
		close(schedulePaused)
		<-clusterLocked
	}
	failpoints["removeSchedulerClusterLocked"] = func() {
		close(clusterLocked)
	}

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // background job: collect metrics
		defer wg.Done()
		cluster.collectMetrics()
	}()
	co.wg.Add(1)
	go co.runScheduler(co.schedulers[HotRegionName]) // hot region scheduler loop

	<-metricsPaused
	<-schedulePaused
	// API: pd-ctl scheduler remove balance-leader-scheduler
	err := cluster.RemoveScheduler("balance-leader-scheduler")
	fmt.Println("remove scheduler:", err)

	wg.Wait()
	co.wg.Wait()
	fmt.Println("hot spot metrics:", len(hotSpotStatusGauge))
}
