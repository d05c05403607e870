// Project: cilium/cilium operator (pkg/aws/eni/node.go Node.ResyncInterfacesAndIPs/foreachENI/GetMaximumAllocatableIPv4, pkg/ipam/node.go Node.InstanceID/maintainIPPool), v1.21 development, September 2026.
// Bug: the AWS ENI node's ResyncInterfacesAndIPs takes its own n.mutex for writing and, inside foreachENI, calls n.node.InstanceID(), which read-locks the operator's ipam Node. The ipam Node's pool maintainer holds that ipam Node mutex while it calls down into the AWS ops (GetMaximumAllocatableIPv4), which read-lock the AWS node, so a resync and a pool maintenance of the same node wedge each other and ENI allocation stops (PR #48645 "aws/ipam: Fix lock order inversion with the operator node", which reads the instance ID before taking n.mutex and passes it into foreachENI; code approximate).
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// ---- pkg/ipam ----

type CiliumNode struct {
	Name       string
	InstanceID string
}

// NodeOperations is the interface the cloud-specific node implements.
type NodeOperations interface {
	ResyncInterfacesAndIPs(ctx context.Context) (available map[string]string, err error)
	GetMaximumAllocatableIPv4() int
}

// Node is the operator's nodemanager.Node.
type Node struct {
	mutex     sync.RWMutex
	resource  *CiliumNode
	ops       NodeOperations
	available map[string]string
	needed    int
}

func (n *Node) InstanceID() (id string) {
	n.mutex.RLock()
	if n.resource != nil {
		id = n.resource.InstanceID
	}
	n.mutex.RUnlock()
	return
}

func (n *Node) getMaxAllocate() int {
	return n.ops.GetMaximumAllocatableIPv4()
}

func (n *Node) determineMaintenanceAction() int {
	time.Sleep(50 * time.Millisecond) // compute allocation/release candidates
	return n.getMaxAllocate() - len(n.available)
}

func (n *Node) maintainIPPool(_ context.Context) {
	n.mutex.Lock()
	defer n.mutex.Unlock()
	n.needed = n.determineMaintenanceAction()
}

func (n *Node) recalculate(ctx context.Context) {
	a, err := n.ops.ResyncInterfacesAndIPs(ctx)
	if err != nil {
		return
	}
	n.mutex.Lock()
	n.available = a
	n.mutex.Unlock()
}

// ---- pkg/aws/eni ----

type ENI struct {
	ID        string
	Addresses []string
}

type InstancesManager struct {
	mutex     sync.RWMutex
	instances map[string][]ENI
}

func (m *InstancesManager) ForeachInstance(instanceID string, fn func(e *ENI)) {
	m.mutex.RLock()
	defer m.mutex.RUnlock()
	for i := range m.instances[instanceID] {
		fn(&m.instances[instanceID][i])
	}
}

type awsNode struct {
	node    *Node
	mutex   sync.RWMutex
	enis    map[string]ENI
	manager *InstancesManager
}

func (n *awsNode) foreachENI(instanceID string, fn func(e *ENI)) {
	n.manager.ForeachInstance(instanceID, fn)
}

func (n *awsNode) ResyncInterfacesAndIPs(_ context.Context) (map[string]string, error) {
	// Read the instance ID before taking n.mutex: the ipam Node lock must
	// never be acquired while holding the aws Node lock.
	instanceID := n.node.InstanceID()

	n.mutex.Lock()
	defer n.mutex.Unlock()

	n.enis = map[string]ENI{}
	available := map[string]string{}
	n.foreachENI(instanceID, func(e *ENI) {
		n.enis[e.ID] = *e
		for _, ip := range e.Addresses {
			available[ip] = e.ID
		}
	})
	return available, nil
}

func (n *awsNode) GetMaximumAllocatableIPv4() int {
	n.mutex.RLock()
	defer n.mutex.RUnlock()
	return (3 - 1) * 10 // (adapters - primary) * IPv4 per adapter
}

func main() {
	ctx := context.Background()
	mgr := &InstancesManager{instances: map[string][]ENI{
		"i-0abc": {{ID: "eni-1", Addresses: []string{"10.0.1.10", "10.0.1.11"}}},
	}}
	ipamNode := &Node{resource: &CiliumNode{Name: "ip-10-0-1-5", InstanceID: "i-0abc"}}
	ipamNode.ops = &awsNode{node: ipamNode, manager: mgr}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // pool maintainer trigger
		defer wg.Done()
		ipamNode.maintainIPPool(ctx)
	}()
	go func() { // NodeManager.Resync after the instances API refresh
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		ipamNode.recalculate(ctx)
	}()
	wg.Wait()
	fmt.Println("needed:", ipamNode.needed, "available:", len(ipamNode.available))
}
