// Project: apache/incubator-yunikorn-core (the YuniKorn Kubernetes batch
// scheduler core), September 2019 (pre 0.8).
// Files/functions: pkg/scheduler/scheduling_queue.go
// (SchedulingQueue.IncPendingResource, GetPendingResource),
// pkg/scheduler/scheduler.go (Scheduler.singleStepSchedule,
// findAllocationAsks, findNextAllocationAskCandidate, sortSubqueuesFromQueue,
// handleSchedulerEvent, processAllocationUpdateEvent,
// updateSchedulingRequest).
// PR apache/incubator-yunikorn-core#50 "Fix potential deadlock in
// SchedulingQueue".
//
// The scheduling loop walks the queue hierarchy top down:
// findNextAllocationAskCandidate calls sortSubqueuesFromQueue(parent), which
// read-locks the parent queue and, for every child, asks
// child.GetPendingResource(), which read-locks the child. The scheduler
// event handler processes a new allocation ask bottom up:
// updateSchedulingRequest calls leafQueue.IncPendingResource, which locks
// the leaf queue and, still holding it, calls parent.IncPendingResource,
// which locks the parent. With the scheduler holding the parent's read lock
// and the event handler holding the child's write lock, the handler's Lock
// on the parent waits for the reader and the scheduler's RLock on the child
// waits for the writer, so scheduling stops cluster wide. The fix makes
// IncPendingResource (and DecPendingResource) update the parent first and
// only then lock the queue itself, so locks are always taken parent before
// child.
package main

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

type Resource struct {
	Resources map[string]int64
}

func Add(left, right *Resource) *Resource {
	out := &Resource{Resources: map[string]int64{}}
	for k, v := range left.Resources {
		out.Resources[k] += v
	}
	for k, v := range right.Resources {
		out.Resources[k] += v
	}
	return out
}

func StrictlyGreaterThanZero(r *Resource) bool {
	for _, v := range r.Resources {
		if v > 0 {
			return true
		}
	}
	return false
}

type SchedulingQueue struct {
	Name            string
	parent          *SchedulingQueue
	childrenQueues  map[string]*SchedulingQueue
	pendingResource *Resource
	isLeaf          bool

	lock sync.RWMutex
}

func NewSchedulingQueue(name string, parent *SchedulingQueue, leaf bool) *SchedulingQueue {
	sq := &SchedulingQueue{Name: name, parent: parent, isLeaf: leaf,
		childrenQueues:  map[string]*SchedulingQueue{},
		pendingResource: &Resource{Resources: map[string]int64{}}}
	if parent != nil {
		parent.childrenQueues[name] = sq
	}
	return sq
}

func (sq *SchedulingQueue) GetPendingResource() *Resource {
	sq.lock.RLock()
	defer sq.lock.RUnlock()
	return sq.pendingResource
}

// Update pending resource of this queue
func (sq *SchedulingQueue) IncPendingResource(delta *Resource) {
	// update the parent
	if sq.parent != nil {
		sq.parent.IncPendingResource(delta)
	}
	// update this queue
	sq.lock.Lock()
	defer sq.lock.Unlock()
	sq.pendingResource = Add(sq.pendingResource, delta)
}

type Scheduler struct {
	root *SchedulingQueue
}

// Return a sorted copy of the queues for this parent queue.
// Only queues with a pending resource request are considered.
func sortSubqueuesFromQueue(parentQueue *SchedulingQueue) []*SchedulingQueue {
	parentQueue.lock.RLock()
	defer parentQueue.lock.RUnlock()

	time.Sleep(100 * time.Millisecond)
	sortedQueues := make([]*SchedulingQueue, 0)
	for _, v := range parentQueue.childrenQueues {
		// Only look at queue when pending-res > 0
		if StrictlyGreaterThanZero(v.GetPendingResource()) {
			sortedQueues = append(sortedQueues, v)
		}
	}
	sort.Slice(sortedQueues, func(i, j int) bool { return sortedQueues[i].Name < sortedQueues[j].Name })
	return sortedQueues
}

func (m *Scheduler) findNextAllocationAskCandidate(queues []*SchedulingQueue) *SchedulingQueue {
	for _, queue := range queues {
		if queue.isLeaf {
			return queue
		}
		if candidate := m.findNextAllocationAskCandidate(sortSubqueuesFromQueue(queue)); candidate != nil {
			return candidate
		}
	}
	return nil
}

func (m *Scheduler) findAllocationAsks() *SchedulingQueue {
	return m.findNextAllocationAskCandidate([]*SchedulingQueue{m.root})
}

func (m *Scheduler) singleStepSchedule() {
	if q := m.findAllocationAsks(); q != nil {
		fmt.Println("allocating from", q.Name)
	}
}

type AllocationAsk struct {
	queue     *SchedulingQueue
	resources *Resource
}

func (m *Scheduler) updateSchedulingRequest(ask *AllocationAsk) {
	ask.queue.IncPendingResource(ask.resources)
}

func (m *Scheduler) processAllocationUpdateEvent(asks []*AllocationAsk) {
	for _, ask := range asks {
		m.updateSchedulingRequest(ask)
	}
}

func (m *Scheduler) handleSchedulerEvent(ev []*AllocationAsk) {
	m.processAllocationUpdateEvent(ev)
}

func main() {
	root := NewSchedulingQueue("root", nil, false)
	batch := NewSchedulingQueue("root.batch", root, true)
	m := &Scheduler{root: root}
	m.processAllocationUpdateEvent([]*AllocationAsk{{queue: batch, resources: &Resource{Resources: map[string]int64{"vcore": 1000}}}})

	done := make(chan struct{}, 2)
	go func() {
		m.singleStepSchedule()
		done <- struct{}{}
	}()
	go func() {
		time.Sleep(30 * time.Millisecond)
		m.handleSchedulerEvent([]*AllocationAsk{{queue: batch, resources: &Resource{Resources: map[string]int64{"memory": 512}}}})
		done <- struct{}{}
	}()
	<-done
	<-done
	fmt.Println("root pending:", root.GetPendingResource().Resources)
}
