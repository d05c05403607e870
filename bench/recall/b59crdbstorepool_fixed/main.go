// Project: cockroachdb/cockroach
// Version: master, spring 2025, with PR #145538 applied
// Files/functions: pkg/kv/kvserver/allocator/storepool/store_pool.go:
// StorePool.UpdateLocalStoresAfterLeaseTransfer, StorePool.GetStoreDetail,
// StoreDetailMu; pkg/kv/kvserver/replicate_queue.go: replicateQueue.TransferLease;
// pkg/kv/kvserver/store_rebalancer.go: StoreRebalancer.applyLeaseRebalance.
// Issue: cockroachdb/cockroach #145531, fixed by PR #145538 "storepool: prevent
// holding multiple mutexes in UpdateLocalStoresAfterLeaseTransfer".
//
// Each store known to the StorePool has its own StoreDetailMu (a
// syncutil.RWMutex embedded next to the StoreDetail). After a lease transfer
// the caller updates the local view of both stores' capacities through the
// AllocatorStorePool interface. UpdateLocalStoresAfterLeaseTransfer looked up
// and locked the detail of the source store, and with that lock still held
// (the unlock is deferred) looked up and locked the detail of the target
// store. On a multi-store node the replicate queue of s1 can transfer a lease
// from s1 to s2 while the store rebalancer of s2 transfers a lease from s2 to
// s1; one goroutine holds s1's detail mutex and wants s2's, the other holds
// s2's and wants s1's, which is an AB-BA deadlock.
// This fixed version updates the two details one after the other, never holding more
// than one StoreDetailMu at a time.
package main

import (
	"sync"
	"time"
)

type RWMutex struct{ sync.RWMutex }

func (m *RWMutex) AssertHeld() {}

type StoreID int32

type StoreCapacity struct {
	LeaseCount       int32
	QueriesPerSecond float64
}

type StoreDescriptor struct {
	StoreID  StoreID
	Capacity StoreCapacity
}

type StoreDetail struct {
	Desc            *StoreDescriptor
	LastUpdatedTime time.Time
}

type StoreDetailMu struct {
	RWMutex
	StoreDetail
}

type RangeUsageInfo struct {
	QueriesPerSecond float64
}

// AllocatorStorePool is the interface the allocator and queues use.
type AllocatorStorePool interface {
	UpdateLocalStoresAfterLeaseTransfer(from, to StoreID, usage RangeUsageInfo)
}

type StorePool struct {
	DetailsMu struct {
		RWMutex
		StoreDetails map[StoreID]*StoreDetailMu
	}
}

// GetStoreDetail returns the detail for storeID, creating it if needed.
func (sp *StorePool) GetStoreDetail(storeID StoreID) *StoreDetailMu {
	sp.DetailsMu.Lock()
	defer sp.DetailsMu.Unlock()
	d, ok := sp.DetailsMu.StoreDetails[storeID]
	if !ok {
		d = &StoreDetailMu{}
		sp.DetailsMu.StoreDetails[storeID] = d
	}
	return d
}

func (sp *StorePool) UpdateLocalStoresAfterLeaseTransfer(from, to StoreID, usage RangeUsageInfo) {
	fromDetail := sp.GetStoreDetail(from)
	fromDetail.Lock()
	if fromDetail.Desc != nil {
		fromDetail.Desc.Capacity.LeaseCount--
		fromDetail.Desc.Capacity.QueriesPerSecond -= usage.QueriesPerSecond
	}
	fromDetail.Unlock()
	// The other store transfers a lease in the opposite direction here.
	time.Sleep(50 * time.Millisecond)
	toDetail := sp.GetStoreDetail(to)
	toDetail.Lock()
	if toDetail.Desc != nil {
		toDetail.Desc.Capacity.LeaseCount++
		toDetail.Desc.Capacity.QueriesPerSecond += usage.QueriesPerSecond
	}
	toDetail.Unlock()
}

type replicateQueue struct {
	storeID   StoreID
	storePool AllocatorStorePool
}

func (rq *replicateQueue) TransferLease(target StoreID, usage RangeUsageInfo) {
	// ... the lease transfer itself succeeded ...
	rq.storePool.UpdateLocalStoresAfterLeaseTransfer(rq.storeID, target, usage)
}

type StoreRebalancer struct {
	storeID   StoreID
	storePool AllocatorStorePool
}

func (sr *StoreRebalancer) applyLeaseRebalance(target StoreID, usage RangeUsageInfo) {
	sr.storePool.UpdateLocalStoresAfterLeaseTransfer(sr.storeID, target, usage)
}

func main() {
	sp := &StorePool{}
	sp.DetailsMu.StoreDetails = map[StoreID]*StoreDetailMu{}
	for _, id := range []StoreID{1, 2} {
		d := sp.GetStoreDetail(id)
		d.Desc = &StoreDescriptor{StoreID: id, Capacity: StoreCapacity{LeaseCount: 10}}
	}
	rq := &replicateQueue{storeID: 1, storePool: sp}
	sr := &StoreRebalancer{storeID: 2, storePool: sp}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		rq.TransferLease(2, RangeUsageInfo{QueriesPerSecond: 100})
	}()
	go func() {
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		sr.applyLeaseRebalance(1, RangeUsageInfo{QueriesPerSecond: 50})
	}()
	wg.Wait()
}
