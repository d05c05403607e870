// Command b67yunikornremovenode reproduces the shape of a lock-order
// deadlock shipped in apache/yunikorn-core (the YuniKorn Kubernetes batch
// scheduler), YUNIKORN-551 "Deadlock when removing node", fixed by PR #253.
//
// Node removal (RMProxy -> PartitionContext.removeNode) write-locks the
// partition and keeps it through removeNodeInternal and
// removeNodeAllocations, which releases every allocation of the node through
// Application.RemoveAllocation, taking the application's lock. The
// scheduling cycle (PartitionContext.tryAllocate) calls
// Application.tryAllocate with the method value pc.GetNodeIterator: the
// application holds its own lock and only then calls the iterator, which
// read-locks the partition.
package main

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

type Allocation struct {
	UUID          string
	ApplicationID string
	NodeID        string
}

type Node struct {
	sync.RWMutex
	NodeID      string
	allocations map[string]*Allocation
}

func (n *Node) AddAllocation(a *Allocation) {
	n.Lock()
	defer n.Unlock()
	n.allocations[a.UUID] = a
}

func (n *Node) GetAllAllocations() []*Allocation {
	n.RLock()
	defer n.RUnlock()
	out := make([]*Allocation, 0, len(n.allocations))
	for _, a := range n.allocations {
		out = append(out, a)
	}
	return out
}

// NodeIterator walks the schedulable nodes of a partition.
type NodeIterator interface {
	ForEachNode(fn func(*Node) bool)
}

type defaultNodeIterator struct{ nodes []*Node }

func (it *defaultNodeIterator) ForEachNode(fn func(*Node) bool) {
	for _, n := range it.nodes {
		if !fn(n) {
			return
		}
	}
}

type Application struct {
	sync.RWMutex
	ApplicationID string
	requests      []string
	allocations   map[string]*Allocation
}

// tryAllocate places the first pending request on a node from the iterator.
func (sa *Application) tryAllocate(getIterator func() NodeIterator) *Allocation {
	sa.Lock()
	defer sa.Unlock()
	sa.sortRequests()
	var result *Allocation
	getIterator().ForEachNode(func(n *Node) bool {
		result = &Allocation{UUID: sa.requests[0] + "-alloc", ApplicationID: sa.ApplicationID, NodeID: n.NodeID}
		n.AddAllocation(result)
		return false
	})
	if result != nil {
		sa.allocations[result.UUID] = result
		sa.requests = sa.requests[1:]
	}
	return result
}

// sortRequests stands in for the request sorting done under the app lock.
func (sa *Application) sortRequests() {
	time.Sleep(150 * time.Millisecond)
	sort.Strings(sa.requests)
}

func (sa *Application) RemoveAllocation(uuid string) *Allocation {
	sa.Lock()
	defer sa.Unlock()
	a := sa.allocations[uuid]
	delete(sa.allocations, uuid)
	return a
}

type PartitionContext struct {
	sync.RWMutex
	Name         string
	nodes        map[string]*Node
	applications map[string]*Application
}

func (pc *PartitionContext) GetNodeIterator() NodeIterator {
	pc.RLock()
	defer pc.RUnlock()
	it := &defaultNodeIterator{}
	for _, n := range pc.nodes {
		it.nodes = append(it.nodes, n)
	}
	return it
}

func (pc *PartitionContext) getApplication(appID string) *Application {
	pc.RLock()
	defer pc.RUnlock()
	return pc.applications[appID]
}

func (pc *PartitionContext) getApplications() []*Application {
	pc.RLock()
	defer pc.RUnlock()
	out := make([]*Application, 0, len(pc.applications))
	for _, app := range pc.applications {
		out = append(out, app)
	}
	return out
}

func (pc *PartitionContext) tryAllocate() *Allocation {
	for _, app := range pc.getApplications() {
		if alloc := app.tryAllocate(pc.GetNodeIterator); alloc != nil {
			return alloc
		}
	}
	return nil
}

// removeNode removes a node from the partition and returns the released allocations.
func (pc *PartitionContext) removeNode(nodeID string) []*Allocation {
	pc.Lock()
	defer pc.Unlock()
	return pc.removeNodeInternal(nodeID)
}

// removeNodeInternal must be called holding the partition lock.
func (pc *PartitionContext) removeNodeInternal(nodeID string) []*Allocation {
	node := pc.nodes[nodeID]
	delete(pc.nodes, nodeID)
	return pc.removeNodeAllocations(node)
}

func (pc *PartitionContext) removeNodeAllocations(node *Node) []*Allocation {
	var released []*Allocation
	for _, alloc := range node.GetAllAllocations() {
		app := pc.applications[alloc.ApplicationID]
		if a := app.RemoveAllocation(alloc.UUID); a != nil {
			released = append(released, a)
		}
	}
	return released
}

func main() {
	node1 := &Node{NodeID: "node-1", allocations: map[string]*Allocation{}}
	node2 := &Node{NodeID: "node-2", allocations: map[string]*Allocation{}}
	existing := &Allocation{UUID: "driver-0", ApplicationID: "app-1", NodeID: "node-1"}
	node1.AddAllocation(existing)
	app := &Application{ApplicationID: "app-1", requests: []string{"executor-1"},
		allocations: map[string]*Allocation{existing.UUID: existing}}
	pc := &PartitionContext{Name: "[rm-1]default",
		nodes:        map[string]*Node{"node-1": node1, "node-2": node2},
		applications: map[string]*Application{"app-1": app}}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // scheduling cycle
		defer wg.Done()
		if a := pc.tryAllocate(); a != nil {
			fmt.Println("allocated", a.UUID, "on", a.NodeID)
		}
	}()
	go func() { // RM proxy: node deleted in the shim
		defer wg.Done()
		time.Sleep(50 * time.Millisecond)
		fmt.Println("released", len(pc.removeNode("node-1")), "allocations")
	}()
	wg.Wait()
}
