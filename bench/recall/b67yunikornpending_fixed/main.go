// Command b67yunikornpending_fixed is the fixed twin of b67yunikornpending,
// which reproduces the shape of a lock-order deadlock
// shipped in apache/yunikorn-core (the YuniKorn Kubernetes batch scheduler),
// fixed by PR #50 ("Fix potential deadlock in SchedulingQueue").
//
// Every SchedulingQueue embeds its own RWMutex and points at its parent.
// The scheduling cycle (singleStepSchedule -> findAllocationAsks ->
// sortSubqueuesFromQueue) read-locks a parent queue and, while sorting the
// children, read-locks each child through GetPendingResource. The event
// handler (handleSchedulerEvent -> processAllocationUpdateEvent ->
// updateSchedulingRequest) calls IncPendingResource on the leaf, which
// write-locks the leaf and then recurses into the parent's
// IncPendingResource, write-locking the parent: child then parent against
// parent then child.
package main

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

type Resource map[string]int64

func (r Resource) Add(delta Resource) Resource {
	out := Resource{}
	for k, v := range r {
		out[k] = v
	}
	for k, v := range delta {
		out[k] += v
	}
	return out
}

type SchedulingQueue struct {
	sync.RWMutex
	Name           string
	parent         *SchedulingQueue
	childrenQueues map[string]*SchedulingQueue
	pending        Resource
}

func newSchedulingQueue(name string, parent *SchedulingQueue) *SchedulingQueue {
	sq := &SchedulingQueue{Name: name, parent: parent, childrenQueues: map[string]*SchedulingQueue{}, pending: Resource{}}
	if parent != nil {
		parent.Lock()
		parent.childrenQueues[name] = sq
		parent.Unlock()
	}
	return sq
}

// GetPendingResource returns the pending resources of this queue.
func (sq *SchedulingQueue) GetPendingResource() Resource {
	sq.RLock()
	defer sq.RUnlock()
	return sq.pending
}

// IncPendingResource adds delta to this queue and all of its parents.
func (sq *SchedulingQueue) IncPendingResource(delta Resource) {
	// update the parent before taking this queue's lock
	if sq.parent != nil {
		sq.parent.IncPendingResource(delta)
	}
	sq.Lock()
	defer sq.Unlock()
	sq.pending = sq.pending.Add(delta)
}

type AllocationAsk struct {
	AllocationKey string
	QueueName     string
	Resource      Resource
}

type AllocationUpdateEvent struct{ NewAsks []*AllocationAsk }

type Scheduler struct{ root *SchedulingQueue }

func (s *Scheduler) singleStepSchedule() {
	asks := s.findAllocationAsks(s.root)
	fmt.Println("scheduling cycle visited", strings.Join(asks, ","))
}

func (s *Scheduler) findAllocationAsks(q *SchedulingQueue) []string {
	children := s.sortSubqueuesFromQueue(q)
	if len(children) == 0 {
		return []string{q.Name}
	}
	var out []string
	for _, child := range children {
		out = append(out, s.findAllocationAsks(child)...)
	}
	return out
}

// sortSubqueuesFromQueue orders the children by pending resources.
func (s *Scheduler) sortSubqueuesFromQueue(parent *SchedulingQueue) []*SchedulingQueue {
	parent.RLock()
	defer parent.RUnlock()
	children := make([]*SchedulingQueue, 0, len(parent.childrenQueues))
	for _, c := range parent.childrenQueues {
		children = append(children, c)
	}
	computeFairShareWeights(children)
	sort.SliceStable(children, func(i, j int) bool {
		return children[i].GetPendingResource()["memory"] > children[j].GetPendingResource()["memory"]
	})
	return children
}

// computeFairShareWeights stands in for the per-child policy work done while
// the parent is read-locked; it is what makes the window wide.
func computeFairShareWeights(children []*SchedulingQueue) {
	time.Sleep(150 * time.Millisecond)
}

func (s *Scheduler) handleSchedulerEvent(ev any) {
	switch v := ev.(type) {
	case *AllocationUpdateEvent:
		s.processAllocationUpdateEvent(v)
	}
}

func (s *Scheduler) processAllocationUpdateEvent(ev *AllocationUpdateEvent) {
	for _, ask := range ev.NewAsks {
		s.updateSchedulingRequest(ask)
	}
}

func (s *Scheduler) updateSchedulingRequest(ask *AllocationAsk) {
	leaf := s.findQueue(ask.QueueName)
	leaf.IncPendingResource(ask.Resource)
}

func (s *Scheduler) findQueue(path string) *SchedulingQueue {
	q := s.root
	parts := strings.Split(path, ".")
	for i := 1; i < len(parts); i++ {
		q.RLock()
		next := q.childrenQueues[strings.Join(parts[:i+1], ".")]
		q.RUnlock()
		q = next
	}
	return q
}

func main() {
	root := newSchedulingQueue("root", nil)
	newSchedulingQueue("root.default", root)
	newSchedulingQueue("root.batch", root)
	sched := &Scheduler{root: root}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // scheduling loop
		defer wg.Done()
		sched.singleStepSchedule()
	}()
	go func() { // scheduler event handler
		defer wg.Done()
		time.Sleep(50 * time.Millisecond)
		sched.handleSchedulerEvent(&AllocationUpdateEvent{NewAsks: []*AllocationAsk{
			{AllocationKey: "spark-driver-1", QueueName: "root.default", Resource: Resource{"memory": 1024, "vcore": 1}},
		}})
	}()
	wg.Wait()
	fmt.Println("root pending", root.GetPendingResource())
}
