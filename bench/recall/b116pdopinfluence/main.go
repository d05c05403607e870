// Project: tikv/pd (server/schedule/operator_controller.go, server/coordinator.go), late 2018, between PR #1310 and PR #1340.
// Bug: OperatorController.GetOpInfluence read-locks the controller and then calls the exported GetOperators, which read-locks it again; when a region heartbeat removes a finished operator (RemoveOperator, write lock) between the two read locks, the scheduler and the heartbeat goroutine deadlock (issue #1338, fixed by PR #1340 "schedule: fix a deadlock in GetOpInfluence", which iterates oc.operators directly).
package main

import (
	"fmt"
	"sync"
	"time"
)

// RegionInfo is the cached region state kept by the cluster.
type RegionInfo struct {
	ID       uint64
	LeaderID uint64
	Size     int64
}

// Cluster is the part of the cluster the scheduling code needs.
type Cluster interface {
	GetRegion(regionID uint64) *RegionInfo
}

type basicCluster struct {
	mu      sync.RWMutex
	regions map[uint64]*RegionInfo
}

func (c *basicCluster) GetRegion(regionID uint64) *RegionInfo {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.regions[regionID]
}

// Operator is a scheduling operation on one region.
type Operator struct {
	desc      string
	regionID  uint64
	toStore   uint64
	finished  bool
	createdAt time.Time
}

func (o *Operator) RegionID() uint64 { return o.regionID }
func (o *Operator) IsFinish() bool   { return o.finished }
func (o *Operator) IsTimeout() bool  { return time.Since(o.createdAt) > 10*time.Minute }

// Influence adds the pending effect of the operator to the stores.
func (o *Operator) Influence(opInfluence OpInfluence, region *RegionInfo) {
	opInfluence.GetStoreInfluence(o.toStore).RegionSize += region.Size
	opInfluence.GetStoreInfluence(region.LeaderID).RegionSize -= region.Size
}

// StoreInfluence records influences that pending operators will make.
type StoreInfluence struct {
	RegionSize int64
}

// OpInfluence records the influence of the cluster.
type OpInfluence struct {
	storesInfluence map[uint64]*StoreInfluence
}

func (m OpInfluence) GetStoreInfluence(id uint64) *StoreInfluence {
	s, ok := m.storesInfluence[id]
	if !ok {
		s = &StoreInfluence{}
		m.storesInfluence[id] = s
	}
	return s
}

// NewOpInfluence creates an OpInfluence.
func NewOpInfluence(operators []*Operator, cluster Cluster) OpInfluence {
	influence := OpInfluence{storesInfluence: make(map[uint64]*StoreInfluence)}
	for _, op := range operators {
		if region := cluster.GetRegion(op.RegionID()); region != nil {
			op.Influence(influence, region)
		}
	}
	return influence
}

// OperatorController is used to limit the speed of scheduling.
type OperatorController struct {
	sync.RWMutex
	cluster   Cluster
	operators map[uint64]*Operator
}

// opInfluenceHook stands in for a pingcap/failpoint injection point.
var opInfluenceHook = func() {}

// Dispatch is called for every region heartbeat.
func (oc *OperatorController) Dispatch(region *RegionInfo) {
	if op := oc.GetOperator(region.ID); op != nil {
		if op.IsFinish() || op.IsTimeout() {
			oc.RemoveOperator(op)
		}
	}
}

// RemoveOperator removes an operator from the running operators.
func (oc *OperatorController) RemoveOperator(op *Operator) {
	oc.Lock()
	defer oc.Unlock()
	delete(oc.operators, op.RegionID())
}

// GetOperator gets an operator from the given region.
func (oc *OperatorController) GetOperator(regionID uint64) *Operator {
	oc.RLock()
	defer oc.RUnlock()
	return oc.operators[regionID]
}

// GetOperators gets operators from the running operators.
func (oc *OperatorController) GetOperators() []*Operator {
	oc.RLock()
	defer oc.RUnlock()
	operators := make([]*Operator, 0, len(oc.operators))
	for _, op := range oc.operators {
		operators = append(operators, op)
	}
	return operators
}

// GetOpInfluence gets OpInfluence.
func (oc *OperatorController) GetOpInfluence(cluster Cluster) OpInfluence {
	oc.RLock()
	defer oc.RUnlock()
	opInfluenceHook()

	var res []*Operator
	operators := oc.GetOperators()
	for _, op := range operators {
		if !op.IsTimeout() && !op.IsFinish() {
			if region := cluster.GetRegion(op.RegionID()); region != nil {
				res = append(res, op)
			}
		}
	}
	return NewOpInfluence(res, cluster)
}

func main() {
	cluster := &basicCluster{regions: map[uint64]*RegionInfo{
		1: {ID: 1, LeaderID: 1, Size: 96},
		2: {ID: 2, LeaderID: 2, Size: 64},
	}}
	oc := &OperatorController{cluster: cluster, operators: map[uint64]*Operator{
		1: {desc: "balance-region", regionID: 1, toStore: 3, finished: true, createdAt: time.Now()},
		2: {desc: "balance-leader", regionID: 2, toStore: 3, createdAt: time.Now()},
	}}

	inScheduler := make(chan struct{})
	opInfluenceHook = func() {
		close(inScheduler)
		time.Sleep(100 * time.Millisecond)
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // coordinator.runScheduler -> balanceRegionScheduler.Schedule
		defer wg.Done()
		influence := oc.GetOpInfluence(cluster)
		fmt.Println("store 3 influence:", influence.GetStoreInfluence(3).RegionSize)
	}()
	go func() { // HandleRegionHeartbeat -> coordinator.dispatch
		defer wg.Done()
		<-inScheduler
		oc.Dispatch(cluster.GetRegion(1))
	}()
	wg.Wait()
	fmt.Println("operators left:", len(oc.GetOperators()))
}
