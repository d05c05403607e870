// Project: kubernetes/kubernetes v1.19.0-rc, legacy vSphere cloud provider,
// files staging/src/k8s.io/legacy-cloud-providers/vsphere/nodemanager.go
// (NodeManager.GetNodeDetails, getRefreshedNodeInfo, RediscoverNode,
// GetNode) and vsphere_util.go / vsphere.go (getSharedDatastoresInK8SCluster,
// VSphere.CreateVolume).
// Issue: kubernetes/kubernetes#93973 "vSphere create volume hangs forever on
// resource lock" (regression from PR #90836), fixed by PR
// kubernetes/kubernetes#93971 "Refactor locks logic on registeredNodesLock
// to be non-blocking".
//
// GetNodeDetails takes nm.registeredNodesLock.Lock() (line 123) and,
// while iterating registeredNodes, calls GetNodeInfoWithNodeObject ->
// getRefreshedNodeInfo. For a registered node whose NodeInfo is missing
// (its VM was not found when the node registered), getRefreshedNodeInfo
// calls RediscoverNode -> GetNode, which takes
// nm.registeredNodesLock.RLock() (line 94) on the same RWMutex the
// goroutine already holds for writing. The provisioning goroutine blocks
// forever in CreateVolume. The fix iterates over a copy returned by
// nm.getNodes() (taken under RLock and released) instead of holding
// registeredNodesLock across the loop.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

var ErrNoVMFound = errors.New("no VM found")

type Node struct {
	Name       string
	SystemUUID string
}

type VirtualMachine struct{ UUID, Datastore string }

// VSphereInstance is a vCenter with its datacenter inventory.
type VSphereInstance struct {
	vms map[string]*VirtualMachine // by UUID
}

// NodeInfo stores info about the kubernetes node.
type NodeInfo struct {
	vm       *VirtualMachine
	vcServer string
	vmUUID   string
}

type NodeDetails struct {
	NodeName string
	vm       *VirtualMachine
	VMUUID   string
}

type NodeManager struct {
	// Maps the VC server to VSphereInstance
	vsphereInstanceMap map[string]*VSphereInstance
	// Maps node name to node info.
	nodeInfoMap map[string]*NodeInfo
	// Maps node name to node structure
	registeredNodes map[string]*Node

	// Mutexes
	registeredNodesLock sync.RWMutex
	nodeInfoLock        sync.RWMutex
}

func (nm *NodeManager) DiscoverNode(node *Node) error {
	for vc, vsi := range nm.vsphereInstanceMap {
		if vm, ok := vsi.vms[node.SystemUUID]; ok {
			nm.addNodeInfo(node.Name, &NodeInfo{vm: vm, vcServer: vc, vmUUID: node.SystemUUID})
			return nil
		}
	}
	return ErrNoVMFound
}

func (nm *NodeManager) RegisterNode(node *Node) error {
	nm.addNode(node)
	return nm.DiscoverNode(node)
}

func (nm *NodeManager) RediscoverNode(nodeName string) error {
	node, err := nm.GetNode(nodeName)
	if err != nil {
		return err
	}
	return nm.DiscoverNode(&node)
}

func (nm *NodeManager) GetNode(nodeName string) (Node, error) {
	nm.registeredNodesLock.RLock()
	node := nm.registeredNodes[nodeName]
	nm.registeredNodesLock.RUnlock()
	if node == nil {
		return Node{}, ErrNoVMFound
	}
	return *node, nil
}

func (nm *NodeManager) getNodes() map[string]*Node {
	nm.registeredNodesLock.RLock()
	defer nm.registeredNodesLock.RUnlock()
	registeredNodes := make(map[string]*Node, len(nm.registeredNodes))
	for nodeName, node := range nm.registeredNodes {
		registeredNodes[nodeName] = node
	}
	return registeredNodes
}

func (nm *NodeManager) addNode(node *Node) {
	nm.registeredNodesLock.Lock()
	nm.registeredNodes[node.Name] = node
	nm.registeredNodesLock.Unlock()
}

// GetNodeDetails returns NodeDetails for all the discovered nodes.
//
// This method is a getter but it can cause side-effect of updating NodeInfo objects.
func (nm *NodeManager) GetNodeDetails() ([]NodeDetails, error) {
	// Fix (#93971): iterate over a copy; registeredNodesLock is not held
	// across the rediscovery.
	var nodeDetails []NodeDetails

	for nodeName, nodeObj := range nm.getNodes() {
		nodeInfo, err := nm.GetNodeInfoWithNodeObject(nodeObj)
		if err != nil {
			return nil, err
		}
		nodeDetails = append(nodeDetails, NodeDetails{nodeName, nodeInfo.vm, nodeInfo.vmUUID})
	}
	return nodeDetails, nil
}

func (nm *NodeManager) GetNodeInfoWithNodeObject(node *Node) (NodeInfo, error) {
	return nm.getRefreshedNodeInfo(node.Name)
}

func (nm *NodeManager) getRefreshedNodeInfo(nodeName string) (NodeInfo, error) {
	nodeInfo := nm.getNodeInfo(nodeName)
	if nodeInfo == nil {
		// Rediscover node if no NodeInfo found.
		if err := nm.RediscoverNode(nodeName); err != nil {
			return NodeInfo{}, err
		}
		nodeInfo = nm.getNodeInfo(nodeName)
	}
	return *nodeInfo, nil
}

func (nm *NodeManager) addNodeInfo(nodeName string, nodeInfo *NodeInfo) {
	nm.nodeInfoLock.Lock()
	nm.nodeInfoMap[nodeName] = nodeInfo
	nm.nodeInfoLock.Unlock()
}

func (nm *NodeManager) getNodeInfo(nodeName string) *NodeInfo {
	nm.nodeInfoLock.RLock()
	nodeInfo := nm.nodeInfoMap[nodeName]
	nm.nodeInfoLock.RUnlock()
	return nodeInfo
}

// ---- vsphere_util.go / vsphere.go ----

// getSharedDatastoresInK8SCluster gets the shared datastores accessible by
// all the nodes of the cluster.
func getSharedDatastoresInK8SCluster(ctx context.Context, nodeManager *NodeManager) ([]string, error) {
	nodeVMDetails, err := nodeManager.GetNodeDetails()
	if err != nil {
		return nil, err
	}
	if len(nodeVMDetails) == 0 {
		return nil, fmt.Errorf("kubernetes node nodeVmDetail details is empty")
	}
	var shared []string
	for _, d := range nodeVMDetails {
		shared = append(shared, d.vm.Datastore)
	}
	return shared, nil
}

type VSphere struct {
	nodeManager *NodeManager
}

// CreateVolume creates a volume of given size (in KiB) and return the volume path.
func (vs *VSphere) CreateVolume(name string) (string, error) {
	sharedDsList, err := getSharedDatastoresInK8SCluster(context.Background(), vs.nodeManager)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("[%s] kubevols/%s.vmdk", sharedDsList[0], name), nil
}

func main() {
	nm := &NodeManager{
		vsphereInstanceMap: map[string]*VSphereInstance{"vc1": {vms: map[string]*VirtualMachine{
			"uuid-1": {UUID: "uuid-1", Datastore: "ds1"},
		}}},
		nodeInfoMap:     map[string]*NodeInfo{},
		registeredNodes: map[string]*Node{},
	}
	vs := &VSphere{nodeManager: nm}
	_ = nm.RegisterNode(&Node{Name: "worker-1", SystemUUID: "uuid-1"})
	// worker-2's VM is not in the inventory yet: registered, no NodeInfo.
	_ = nm.RegisterNode(&Node{Name: "worker-2", SystemUUID: "uuid-2"})

	// The PV controller provisions a volume for a PVC with the thin SC.
	done := make(chan string)
	go func() {
		path, err := vs.CreateVolume("pvc-1")
		done <- fmt.Sprint(path, " ", err)
	}()
	fmt.Println("CreateVolume:", <-done)
}
