// Project: apache/incubator-yunikorn-core (YuniKorn scheduler core), 0.10 development, Dec 2020.
// Files/functions: pkg/scheduler/partition.go (removeAllocationAsk, unReserveCount, tryAllocate,
// GetNodeIterator), objects/queue.go (Queue.TryAllocate, sortApplications), objects/application.go
// (Application.tryAllocate, RemoveAllocationAsk), context.go (ClusterContext.processAsks, schedule).
// Issue/PR: YUNIKORN-481, apache/incubator-yunikorn-core#228 "deadlock when removing allocation ask".
//
// The scheduler walks the queue tree lock free and calls Application.tryAllocate with the partition's
// GetNodeIterator method value; tryAllocate holds the application lock over the sorted requests and
// calls the iterator, which read-locks the partition. An ask release from the shim goes processAsks ->
// removeAllocationAsk, which write-locks the partition and calls Application.RemoveAllocationAsk,
// which locks the application: an ask removed while its application is scheduled blocks both for
// ever. The fix makes removeAllocationAsk lock free (short read lock to find the application; the
// partition lock only afterwards, inside unReserveCount).
package main

import (
	"fmt"
	"strconv"
	"sync"
	"time"
)

type AllocationAsk struct {
	AllocationKey, ApplicationID string
	AllocatedResource            int64
}

type Node struct{ Available int64 }
type NodeIterator interface {
	HasNext() bool
	Next() *Node
}

type defaultNodeIterator struct {
	nodes []*Node
	pos   int
}

func (it *defaultNodeIterator) HasNext() bool { return it.pos < len(it.nodes) }
func (it *defaultNodeIterator) Next() *Node   { it.pos++; return it.nodes[it.pos-1] }

var eventChannel = make(chan string, 1024) // events.GetEventCache(): non-blocking
type Application struct {
	sync.RWMutex
	QueueName      string
	sortedRequests []*AllocationAsk
	reservations   map[string]int
}

// Try a regular allocation of the pending requests
func (sa *Application) tryAllocate(headRoom int64, nodeIterator func() NodeIterator) *AllocationAsk {
	sa.Lock()
	defer sa.Unlock()
	for _, request := range sa.sortedRequests {
		// resource must fit in headroom otherwise skip the request
		if request.AllocatedResource > headRoom {
			select {
			case eventChannel <- fmt.Sprintf("Application %s does not fit into %s queue", request.ApplicationID, sa.QueueName):
			default:
			}
			continue
		}
		iterator := nodeIterator()
		for iterator != nil && iterator.HasNext() {
			if node := iterator.Next(); node.Available >= request.AllocatedResource {
				return request
			}
		}
	}
	return nil
}

func (sa *Application) RemoveAllocationAsk(allocKey string) int {
	sa.Lock()
	defer sa.Unlock()
	for i, ask := range sa.sortedRequests {
		if ask.AllocationKey == allocKey {
			sa.sortedRequests = append(sa.sortedRequests[:i], sa.sortedRequests[i+1:]...)
			break
		}
	}
	released := sa.reservations[allocKey]
	delete(sa.reservations, allocKey)
	return released
}

type Queue struct {
	sync.RWMutex
	maxResource  int64
	applications map[string]*Application
}

func (sq *Queue) sortApplications() []*Application {
	sq.RLock()
	defer sq.RUnlock()
	apps := make([]*Application, 0, len(sq.applications))
	for _, app := range sq.applications {
		apps = append(apps, app)
	}
	return apps
}

// TryAllocate is lock free: all locks are taken when needed in called functions.
func (sq *Queue) TryAllocate(iterator func() NodeIterator) *AllocationAsk {
	for _, app := range sq.sortApplications() {
		if alloc := app.tryAllocate(sq.maxResource, iterator); alloc != nil {
			return alloc
		}
	}
	return nil
}

type PartitionContext struct {
	sync.RWMutex
	root         *Queue
	applications map[string]*Application
	nodes        map[string]*Node
	reservedApps map[string]int
}

func (pc *PartitionContext) GetNodeIterator() NodeIterator {
	pc.RLock()
	defer pc.RUnlock()
	nodes := make([]*Node, 0, len(pc.nodes))
	for _, node := range pc.nodes {
		nodes = append(nodes, node)
	}
	return &defaultNodeIterator{nodes: nodes}
}

func (pc *PartitionContext) tryAllocate() *AllocationAsk {
	return pc.root.TryAllocate(pc.GetNodeIterator)
}

// unReserveCount expects the partition lock to be held
func (pc *PartitionContext) unReserveCount(appID string, asks int) {
	if num, found := pc.reservedApps[appID]; found {
		pc.reservedApps[appID] = num - asks
	}
}

func (pc *PartitionContext) removeAllocationAsk(appID string, allocationKey string) {
	pc.Lock()
	defer pc.Unlock()
	if app := pc.applications[appID]; app != nil {
		reservedAsks := app.RemoveAllocationAsk(allocationKey)
		if reservedAsks != 0 {
			pc.unReserveCount(appID, reservedAsks)
		}
	}
}

type ClusterContext struct{ partitions map[string]*PartitionContext }

func (cc *ClusterContext) schedule() bool {
	for _, psc := range cc.partitions {
		if psc.tryAllocate() != nil {
			return true
		}
	}
	return false
}

func (cc *ClusterContext) processAsks(partition, appID string, releasedKeys []string) {
	for _, key := range releasedKeys {
		cc.partitions[partition].removeAllocationAsk(appID, key)
	}
}

func main() {
	app := &Application{QueueName: "root.batch", reservations: map[string]int{"ask-big-3": 1}}
	for i := 0; i < 100000; i++ { // executors asking for more than the queue headroom
		app.sortedRequests = append(app.sortedRequests, &AllocationAsk{AllocationKey: "ask-big-" + strconv.Itoa(i), ApplicationID: "spark-1", AllocatedResource: 64000})
	}
	app.sortedRequests = append(app.sortedRequests, &AllocationAsk{AllocationKey: "driver", ApplicationID: "spark-1", AllocatedResource: 1000})
	apps := map[string]*Application{"spark-1": app}
	pc := &PartitionContext{root: &Queue{maxResource: 8000, applications: apps}, applications: apps,
		nodes: map[string]*Node{"node-1": {Available: 4000}}, reservedApps: map[string]int{"spark-1": 1}}
	cc := &ClusterContext{partitions: map[string]*PartitionContext{"[rm-1]default": pc}}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // scheduler loop
		defer wg.Done()
		fmt.Println("allocated:", cc.schedule())
	}()
	go func() { // RM event handler: the shim releases asks of the application
		defer wg.Done()
		for i := 0; i < 50; i++ {
			time.Sleep(time.Millisecond)
			cc.processAsks("[rm-1]default", "spark-1", []string{"ask-big-" + strconv.Itoa(i)})
		}
	}()
	wg.Wait()
}
