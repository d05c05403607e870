// Project: apache/yunikorn-k8shim (the Kubernetes shim of the YuniKorn scheduler), 1.4.0 development, Oct 2023.
// Files/functions: pkg/cache/context.go (Context.IsPodFitNodeViaPreemption), pkg/cache/scheduler_callback.go
// (AsyncRMCallback.PreemptionPredicates, called by yunikorn-core's preemptor through the
// ResourceManagerCallback interface), pkg/cache/external/scheduler_cache.go (SchedulerCache.GetPod,
// GetPodNoLock, GetNode, LockForReads, UpdatePod).
// Issue/PR: YUNIKORN-2068, apache/yunikorn-k8shim#697 "[YUNIKORN-2068] Fix deadlock when evaluating
// preemption candidates".
//
// When the core scheduler looks for preemption victims it asks the shim, through the RM callback,
// whether the ask would fit a node once a list of allocations is removed. IsPodFitNodeViaPreemption
// takes the scheduler cache's read lock with LockForReads so that the predicates see a stable view,
// and then looks up every victim with the public SchedulerCache.GetPod, which read-locks the same
// RWMutex again. Any informer update that calls a cache writer (UpdatePod, AssumePod, ...) while the
// outer read lock is held queues as a writer; the inner RLock then waits behind the writer and the
// writer waits for the outer read lock: the core scheduling loop and the shim's cache are stuck.
// The fix looks victims up with GetPodNoLock, which relies on the read lock already held.
package main

import (
	"fmt"
	"strconv"
	"sync"
	"time"
)

type Pod struct {
	UID, Name, NodeName string
	MilliCPU            int64
}

type NodeInfo struct {
	Name        string
	Allocatable int64
	Requested   int64
}

type SchedulerCache struct {
	lock        sync.RWMutex
	podsMap     map[string]*Pod
	nodesMap    map[string]*NodeInfo
	assumedPods map[string]bool
}

func (cache *SchedulerCache) GetPod(uid string) (*Pod, bool) {
	cache.lock.RLock()
	defer cache.lock.RUnlock()
	return cache.GetPodNoLock(uid)
}

func (cache *SchedulerCache) GetPodNoLock(uid string) (*Pod, bool) {
	pod, ok := cache.podsMap[uid]
	return pod, ok
}

func (cache *SchedulerCache) GetNode(name string) *NodeInfo {
	cache.lock.RLock()
	defer cache.lock.RUnlock()
	return cache.nodesMap[name]
}

func (cache *SchedulerCache) LockForReads()   { cache.lock.RLock() }
func (cache *SchedulerCache) UnlockForReads() { cache.lock.RUnlock() }

func (cache *SchedulerCache) UpdatePod(pod *Pod) {
	cache.lock.Lock()
	defer cache.lock.Unlock()
	cache.podsMap[pod.UID] = pod
}

type PredicateManager interface {
	PreemptionPredicates(pod *Pod, node *NodeInfo, victims []*Pod, startIndex int) int
}

type predicateManagerImpl struct{}

func (p *predicateManagerImpl) PreemptionPredicates(pod *Pod, node *NodeInfo, victims []*Pod, startIndex int) int {
	free := node.Allocatable - node.Requested
	for i := startIndex; i < len(victims); i++ {
		if victims[i] != nil {
			free += victims[i].MilliCPU
		}
		if free >= pod.MilliCPU {
			return i
		}
	}
	return -1
}

type Context struct {
	lock           sync.RWMutex
	schedulerCache *SchedulerCache
	predManager    PredicateManager
}

func (ctx *Context) IsPodFitNodeViaPreemption(name, node string, allocations []string, startIndex int) (int, bool) {
	ctx.lock.RLock()
	defer ctx.lock.RUnlock()
	if pod, ok := ctx.schedulerCache.GetPod(name); ok {
		// if pod exists in cache, try to run predicates
		if targetNode := ctx.schedulerCache.GetNode(node); targetNode != nil {
			// need to lock cache here as predicates need a stable view into the cache
			ctx.schedulerCache.LockForReads()
			defer ctx.schedulerCache.UnlockForReads()

			// look up each victim in the scheduler cache
			victims := make([]*Pod, 0)
			for _, uid := range allocations {
				if victim, ok := ctx.schedulerCache.GetPodNoLock(uid); ok {
					victims = append(victims, victim)
				} else {
					// if pod isn't found, add a placeholder so that the list is still the same size
					victims = append(victims, nil)
				}
			}

			// check predicates for a match
			if index := ctx.predManager.PreemptionPredicates(pod, targetNode, victims, startIndex); index != -1 {
				return index, true
			}
		}
	}
	return -1, false
}

type PreemptionPredicatesArgs struct {
	AllocationKey, NodeID string
	PreemptAllocationKeys []string
	StartIndex            int32
}

type PreemptionPredicatesResponse struct {
	Success bool
	Index   int32
}

// ResourceManagerCallback is the interface yunikorn-core uses to call back into the shim.
type ResourceManagerCallback interface {
	PreemptionPredicates(args *PreemptionPredicatesArgs) *PreemptionPredicatesResponse
}

type AsyncRMCallback struct{ context *Context }

func (callback *AsyncRMCallback) PreemptionPredicates(args *PreemptionPredicatesArgs) *PreemptionPredicatesResponse {
	index, ok := callback.context.IsPodFitNodeViaPreemption(args.AllocationKey, args.NodeID, args.PreemptAllocationKeys, int(args.StartIndex))
	if !ok {
		index = -1
	}
	return &PreemptionPredicatesResponse{Success: ok, Index: int32(index)}
}

// checkPreemptionPredicates is the core side: pkg/scheduler/objects/preemption.go.
func checkPreemptionPredicates(rm ResourceManagerCallback, askKey, nodeID string, victims []string) bool {
	resp := rm.PreemptionPredicates(&PreemptionPredicatesArgs{AllocationKey: askKey, NodeID: nodeID, PreemptAllocationKeys: victims})
	return resp.Success
}

func main() {
	cache := &SchedulerCache{podsMap: map[string]*Pod{}, nodesMap: map[string]*NodeInfo{}, assumedPods: map[string]bool{}}
	cache.nodesMap["node-1"] = &NodeInfo{Name: "node-1", Allocatable: 64000, Requested: 64000}
	victims := make([]string, 0, 300000)
	for i := 0; i < 300000; i++ {
		uid := "victim-" + strconv.Itoa(i%110)
		cache.podsMap[uid] = &Pod{UID: uid, Name: uid, NodeName: "node-1", MilliCPU: 10}
		victims = append(victims, uid)
	}
	cache.podsMap["ask-1"] = &Pod{UID: "ask-1", Name: "high-prio", MilliCPU: 1000000}
	ctx := &Context{schedulerCache: cache, predManager: &predicateManagerImpl{}}
	var rm ResourceManagerCallback = &AsyncRMCallback{context: ctx}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // core scheduling cycle evaluating preemption on node-1
		defer wg.Done()
		fmt.Println("preemption fits:", checkPreemptionPredicates(rm, "ask-1", "node-1", victims))
	}()
	go func() { // pod informer: status updates of the running pods
		defer wg.Done()
		for i := 0; i < 50; i++ {
			time.Sleep(time.Millisecond)
			uid := "victim-" + strconv.Itoa(i)
			cache.UpdatePod(&Pod{UID: uid, Name: uid, NodeName: "node-1", MilliCPU: 10})
		}
	}()
	wg.Wait()
}
