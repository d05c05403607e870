// Project: apache/incubator-yunikorn-core (YuniKorn scheduler core for
// Kubernetes), v0.8.0 development, February/March 2020.
// Files: pkg/scheduler/scheduling_queue.go (SchedulingQueue.tryAllocate,
// sortApplications, incPendingResource), pkg/scheduler/scheduling_application.go
// (SchedulingApplication.recoverOnNode, updateAskRepeatInternal,
// getAssumeAllocated), pkg/scheduler/scheduling_partition.go
// (partitionSchedulingContext.addSchedulingNode / tryAllocate).
// Issue: YUNIKORN-6 "Deadlock in the scheduler when restoring a node with
// allocations"; analysed in apache/incubator-yunikorn-core PR #92 "fix a
// scheduler deadlock", fixed by PR #94 "[YUNIKORN-6] Deadlock in the
// scheduler when restoring a node with allocations".
//
// The scheduling loop walks the queue tree; for a leaf queue tryAllocate calls
// sortApplications, which read-locks the queue and, while sorting, reads each
// application's allocated/pending resources through getters that read-lock
// the application (queue lock -> application lock). When a node registers
// with existing allocations (scheduler restart / shim recovery), the
// partition calls app.recoverOnNode for each allocation: recoverOnNode takes
// the application write lock and calls updateAskRepeatInternal, which pushes
// the pending-resource delta up into the queue via
// sa.queue.incPendingResource, taking the queue write lock (application lock
// -> queue lock). Scheduling and node recovery run concurrently, so each
// holds the lock the other needs. The fix stops updating the queue from
// inside the application lock during recovery: recoverOnNode only adjusts the
// application's own state under its lock and the queue accounting happens
// after the application lock is released.
package main

import (
	"fmt"
	"sync"
	"time"
)

// ---- common/resources ----

type Resource struct{ Resources map[string]int64 }

func NewResourceFromMap(m map[string]int64) *Resource { return &Resource{Resources: m} }

func Add(l, r *Resource) *Resource {
	out := NewResourceFromMap(map[string]int64{})
	for k, v := range l.Resources {
		out.Resources[k] += v
	}
	for k, v := range r.Resources {
		out.Resources[k] += v
	}
	return out
}

func Multiply(base *Resource, ratio int64) *Resource {
	out := NewResourceFromMap(map[string]int64{})
	for k, v := range base.Resources {
		out.Resources[k] = v * ratio
	}
	return out
}

// ---- scheduler ----

type schedulingAllocationAsk struct {
	AskProto          string
	AllocatedResource *Resource
	pendingRepeatAsk  int32
}

type SchedulingApplication struct {
	ApplicationID string
	queue         *SchedulingQueue
	pending       *Resource
	allocated     *Resource
	requests      map[string]*schedulingAllocationAsk
	sync.RWMutex
}

type SchedulingQueue struct {
	Name            string
	parent          *SchedulingQueue
	applications    map[string]*SchedulingApplication
	pendingResource *Resource
	sync.RWMutex
}

type SchedulingNode struct{ NodeID string }

func (sq *SchedulingQueue) incPendingResource(delta *Resource) {
	sq.Lock()
	defer sq.Unlock()
	sq.pendingResource = Add(sq.pendingResource, delta)
}

func (sa *SchedulingApplication) getAssumeAllocated() *Resource {
	sa.RLock()
	defer sa.RUnlock()
	return sa.allocated
}

// sortApplications orders the queue's applications by their allocated share.
func (sq *SchedulingQueue) sortApplications() []*SchedulingApplication {
	sq.RLock()
	defer sq.RUnlock()
	apps := make([]*SchedulingApplication, 0, len(sq.applications))
	for _, app := range sq.applications {
		apps = append(apps, app)
	}
	time.Sleep(20 * time.Millisecond) // policy lookup, share computation
	for _, app := range apps {
		_ = app.getAssumeAllocated()
	}
	return apps
}

func (sq *SchedulingQueue) tryAllocate() {
	for _, app := range sq.sortApplications() {
		fmt.Println("trying to allocate for", app.ApplicationID)
	}
}

func (sa *SchedulingApplication) updateAskRepeatInternal(ask *schedulingAllocationAsk, delta int32) *Resource {
	ask.pendingRepeatAsk += delta
	deltaPendingResource := Multiply(ask.AllocatedResource, int64(delta))
	sa.pending = Add(sa.pending, deltaPendingResource)
	// update the pending of the queue with the same delta
	sa.queue.incPendingResource(deltaPendingResource)
	return deltaPendingResource
}

// recoverOnNode is called when a node registers with an existing allocation
// of this application.
func (sa *SchedulingApplication) recoverOnNode(node *SchedulingNode, ask *schedulingAllocationAsk) {
	sa.Lock()
	defer sa.Unlock()
	time.Sleep(50 * time.Millisecond) // allocation info bookkeeping
	sa.allocated = Add(sa.allocated, ask.AllocatedResource)
	sa.updateAskRepeatInternal(ask, -1)
	fmt.Println("recovered allocation on", node.NodeID)
}

type partitionSchedulingContext struct{ root *SchedulingQueue }

func (psc *partitionSchedulingContext) addSchedulingNode(node *SchedulingNode, apps map[string]*SchedulingApplication) {
	for _, app := range apps {
		for _, ask := range app.requests {
			app.recoverOnNode(node, ask)
		}
	}
}

func main() {
	leaf := &SchedulingQueue{Name: "root.default", applications: map[string]*SchedulingApplication{},
		pendingResource: NewResourceFromMap(map[string]int64{"memory": 2048})}
	app := &SchedulingApplication{ApplicationID: "spark-app-1", queue: leaf,
		pending:   NewResourceFromMap(map[string]int64{"memory": 2048}),
		allocated: NewResourceFromMap(map[string]int64{}),
		requests: map[string]*schedulingAllocationAsk{"driver": {AskProto: "driver", pendingRepeatAsk: 1,
			AllocatedResource: NewResourceFromMap(map[string]int64{"memory": 2048})}}}
	leaf.applications[app.ApplicationID] = app
	psc := &partitionSchedulingContext{root: leaf}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // shim re-registers node-1 with its running pods
		defer wg.Done()
		psc.addSchedulingNode(&SchedulingNode{NodeID: "node-1"}, leaf.applications)
	}()
	go func() { // scheduling loop
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		psc.root.tryAllocate()
	}()
	wg.Wait()
	fmt.Println("done")
}
