// Shape of ovn-org/ovn-kubernetes #5555 ("Fix EgressIP controller deadlock by
// sorting node locks lexicographically"; openshift/ovn-kubernetes #2741).
//
// While programming a pod for an EgressIP, the controller locks the EgressIP
// name, then the node hosting the egress IP (status.Node) and then the pod's
// node (pod.Spec.NodeName), through a keyed lock map. egressip-1 on node-1
// selecting a pod on node-2 and egressip-2 on node-2 selecting a pod on
// node-1, handled concurrently, take the two node locks in opposite orders.
// The fix locks the nodes in lexicographical order.
package main

import (
	"fmt"
	"sync"
	"time"
)

// ---- pkg/syncmap: a map of per-key mutexes ----

type keyLock struct {
	sync.Mutex
	refs int
}

type SyncMap struct {
	mu    sync.Mutex
	locks map[string]*keyLock
}

func NewSyncMap() *SyncMap { return &SyncMap{locks: map[string]*keyLock{}} }

func (m *SyncMap) LockKey(key string) {
	m.mu.Lock()
	l, ok := m.locks[key]
	if !ok {
		l = &keyLock{}
		m.locks[key] = l
	}
	l.refs++
	m.mu.Unlock()
	l.Lock()
}

func (m *SyncMap) UnlockKey(key string) {
	m.mu.Lock()
	l := m.locks[key]
	l.refs--
	if l.refs == 0 {
		delete(m.locks, key)
	}
	m.mu.Unlock()
	l.Unlock()
}

// ---- ovn egressip controller ----

type EgressIPStatusItem struct{ Node, EgressIP string }

type EgressIP struct {
	Name     string
	Statuses []EgressIPStatusItem
}

type Pod struct{ Namespace, Name, NodeName, IP string }

// test hook: widens the window between the two node locks
var afterFirstNodeLock = func() {}

type EgressIPController struct {
	eIPLocks  *SyncMap
	nodeLocks *SyncMap
	mu        sync.Mutex
	reroutes  map[string]string // pod -> egress node
}

func (c *EgressIPController) addPodEgressIPAssignmentsWithLock(eip *EgressIP, pod *Pod) error {
	c.eIPLocks.LockKey(eip.Name)
	defer c.eIPLocks.UnlockKey(eip.Name)
	for _, status := range eip.Statuses {
		if err := c.addPodEgressIPAssignment(eip.Name, status, pod); err != nil {
			return err
		}
	}
	return nil
}

func (c *EgressIPController) nodesToLock(status EgressIPStatusItem, pod *Pod) []string {
	if status.Node == pod.NodeName {
		return []string{status.Node}
	}
	return []string{status.Node, pod.NodeName} // BUG: order depends on the event
}

func (c *EgressIPController) addPodEgressIPAssignment(eipName string, status EgressIPStatusItem, pod *Pod) error {
	nodes := c.nodesToLock(status, pod)
	for i, node := range nodes {
		c.nodeLocks.LockKey(node)
		defer c.nodeLocks.UnlockKey(node)
		if i == 0 {
			afterFirstNodeLock()
		}
	}
	// reroute policy on the pod's node zone, SNAT on the egress node
	c.mu.Lock()
	c.reroutes[pod.Namespace+"/"+pod.Name] = status.Node
	c.mu.Unlock()
	return nil
}

func main() {
	c := &EgressIPController{eIPLocks: NewSyncMap(), nodeLocks: NewSyncMap(), reroutes: map[string]string{}}
	eip1 := &EgressIP{Name: "egressip-1", Statuses: []EgressIPStatusItem{{Node: "node-1", EgressIP: "10.0.0.100"}}}
	eip2 := &EgressIP{Name: "egressip-2", Statuses: []EgressIPStatusItem{{Node: "node-2", EgressIP: "10.0.0.200"}}}
	app1 := &Pod{Namespace: "ns1", Name: "app-1", NodeName: "node-1", IP: "10.128.0.5"}
	app2 := &Pod{Namespace: "ns2", Name: "app-2", NodeName: "node-2", IP: "10.129.0.7"}

	afterFirstNodeLock = func() { time.Sleep(100 * time.Millisecond) }

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // pod add: app-2 matches egressip-1
		defer wg.Done()
		c.addPodEgressIPAssignmentsWithLock(eip1, app2)
	}()
	go func() { // pod add: app-1 matches egressip-2
		defer wg.Done()
		c.addPodEgressIPAssignmentsWithLock(eip2, app1)
	}()
	wg.Wait()
	fmt.Println("reroutes:", c.reroutes)
}
