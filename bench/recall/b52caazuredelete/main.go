// Project: kubernetes/autoscaler, cluster-autoscaler 1.18 (June 2020), Azure
// cloud provider. Files/functions: cloudprovider/azure/azure_scale_set.go
// (ScaleSet.DeleteNodes, DeleteInstances, Nodes, getCurSize), azure_manager.go
// (AzureManager.GetAsgForInstance), azure_cache.go (asgCache.FindForInstance,
// asgCache.regenerate), azure_cloud_provider.go (NodeGroupForNode).
// Fix: PR kubernetes/autoscaler#3261 "Reduce instance lock scope in scale
// sets" (cherry-picked to 1.15-1.18 as #3262-#3265).
//
// DeleteInstances held the scale set's instanceMutex for the whole call,
// including the GetAsgForInstance lookups checking that all instances belong to
// the same scale set. GetAsgForInstance goes through the AzureManager to
// asgCache.FindForInstance, which locks the cache mutex and, on a miss,
// regenerates the map by calling Nodes() on every node group; ScaleSet.Nodes
// locks instanceMutex. A scale-down (instanceMutex, then the cache mutex) and a
// NodeGroupForNode lookup of a new node (the cache mutex, then instanceMutex via
// Nodes) wait on each other, and the autoscaler's loop stops for good. The fix
// takes instanceMutex only after the lookups, around the cache update.
package main

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

type Instance struct{ Id string }
type Node struct{ ProviderID string }

type NodeGroup interface {
	Id() string
	Nodes() ([]Instance, error)
}

type azureRef struct{ Name string }

type vmssClient struct {
	capacity int64
	vms      map[string][]string
}

func (c *vmssClient) Get(resourceGroup, name string) int64 {
	time.Sleep(40 * time.Millisecond) // ARM API round trip
	return c.capacity
}

func (c *vmssClient) DeleteInstancesAsync(resourceGroup, name string, ids []string) error { return nil }
func (c *vmssClient) ListVMs(resourceGroup, name string) []string                         { return c.vms[name] }

type asgCache struct {
	registeredAsgs []NodeGroup
	instanceToAsg  map[azureRef]NodeGroup
	mutex          sync.Mutex
}

func (m *asgCache) FindForInstance(instance *azureRef, vmType string) (NodeGroup, error) {
	m.mutex.Lock()
	defer m.mutex.Unlock()

	inst := azureRef{Name: strings.ToLower(instance.Name)}
	if asg, found := m.instanceToAsg[inst]; found {
		return asg, nil
	}
	if err := m.regenerate(); err != nil {
		return nil, fmt.Errorf("error while looking for ASG for instance %+v, error: %v", *instance, err)
	}
	return m.instanceToAsg[inst], nil
}

func (m *asgCache) regenerate() error {
	newCache := make(map[azureRef]NodeGroup)
	for _, nsg := range m.registeredAsgs {
		instances, err := nsg.Nodes()
		if err != nil {
			return err
		}
		for _, instance := range instances {
			newCache[azureRef{Name: strings.ToLower(instance.Id)}] = nsg
		}
	}
	m.instanceToAsg = newCache
	return nil
}

type AzureManager struct {
	resourceGroup, vmType string
	vmssClient            *vmssClient
	asgCache              *asgCache
}

func (m *AzureManager) GetAsgForInstance(instance *azureRef) (NodeGroup, error) {
	return m.asgCache.FindForInstance(instance, m.vmType)
}

type ScaleSet struct {
	azureRef
	manager             *AzureManager
	sizeMutex           sync.Mutex
	curSize             int64
	lastSizeRefresh     time.Time
	instanceMutex       sync.Mutex
	instanceCache       []Instance
	lastInstanceRefresh time.Time
}

func (scaleSet *ScaleSet) Id() string { return scaleSet.Name }

func (scaleSet *ScaleSet) getCurSize() (int64, error) {
	scaleSet.sizeMutex.Lock()
	defer scaleSet.sizeMutex.Unlock()
	if scaleSet.lastSizeRefresh.Add(15 * time.Second).Before(time.Now()) {
		scaleSet.curSize = scaleSet.manager.vmssClient.Get(scaleSet.manager.resourceGroup, scaleSet.Name)
		scaleSet.lastSizeRefresh = time.Now()
	}
	return scaleSet.curSize, nil
}

func (scaleSet *ScaleSet) Nodes() ([]Instance, error) {
	curSize, err := scaleSet.getCurSize()
	if err != nil {
		return nil, err
	}
	scaleSet.instanceMutex.Lock()
	defer scaleSet.instanceMutex.Unlock()

	if int64(len(scaleSet.instanceCache)) == curSize &&
		scaleSet.lastInstanceRefresh.Add(5*time.Minute).After(time.Now()) {
		return scaleSet.instanceCache, nil
	}
	scaleSet.instanceCache = nil
	for _, id := range scaleSet.manager.vmssClient.ListVMs(scaleSet.manager.resourceGroup, scaleSet.Name) {
		scaleSet.instanceCache = append(scaleSet.instanceCache, Instance{Id: id})
	}
	scaleSet.lastInstanceRefresh = time.Now()
	return scaleSet.instanceCache, nil
}

func (scaleSet *ScaleSet) DeleteInstances(instances []*azureRef) error {
	scaleSet.instanceMutex.Lock()
	defer scaleSet.instanceMutex.Unlock()

	commonAsg, err := scaleSet.manager.GetAsgForInstance(instances[0])
	if err != nil {
		return err
	}
	instanceIDs := []string{}
	for _, instance := range instances {
		asg, err := scaleSet.manager.GetAsgForInstance(instance)
		if err != nil {
			return err
		}
		if asg == nil || !strings.EqualFold(asg.Id(), commonAsg.Id()) {
			return fmt.Errorf("cannot delete instance (%s) which don't belong to the same Scale Set", instance.Name)
		}
		instanceIDs = append(instanceIDs, instance.Name[strings.LastIndex(instance.Name, "/")+1:])
	}

	if err := scaleSet.manager.vmssClient.DeleteInstancesAsync(scaleSet.manager.resourceGroup, commonAsg.Id(), instanceIDs); err != nil {
		return err
	}
	scaleSet.lastInstanceRefresh = time.Time{}
	return nil
}

func (scaleSet *ScaleSet) DeleteNodes(nodes []*Node) error {
	refs := make([]*azureRef, 0, len(nodes))
	for _, node := range nodes {
		refs = append(refs, &azureRef{Name: node.ProviderID})
	}
	return scaleSet.DeleteInstances(refs)
}

type AzureCloudProvider struct{ azureManager *AzureManager }

func (azure *AzureCloudProvider) NodeGroupForNode(node *Node) (NodeGroup, error) {
	return azure.azureManager.GetAsgForInstance(&azureRef{Name: node.ProviderID})
}

const vm = "azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/pool0/virtualMachines/"

func main() {
	manager := &AzureManager{resourceGroup: "rg", vmType: "vmss",
		vmssClient: &vmssClient{capacity: 3, vms: map[string][]string{"pool0": {vm + "0", vm + "1", vm + "2"}}}}
	ss := &ScaleSet{azureRef: azureRef{Name: "pool0"}, manager: manager, curSize: 2,
		instanceCache: []Instance{{Id: vm + "0"}, {Id: vm + "1"}}}
	manager.asgCache = &asgCache{registeredAsgs: []NodeGroup{ss},
		instanceToAsg: map[azureRef]NodeGroup{{Name: strings.ToLower(vm + "0")}: ss, {Name: strings.ToLower(vm + "1")}: ss}}
	provider := &AzureCloudProvider{azureManager: manager}
	done := make(chan string)
	go func() { // the main loop looks up the node group of a node that just joined
		ng, err := provider.NodeGroupForNode(&Node{ProviderID: vm + "2"})
		done <- fmt.Sprint("NodeGroupForNode: ", ng != nil, err)
	}()
	time.Sleep(10 * time.Millisecond)
	go func() { // the scale-down removes an empty node
		done <- fmt.Sprint("DeleteNodes: ", ss.DeleteNodes([]*Node{{ProviderID: vm + "0"}}))
	}()
	fmt.Println(<-done, <-done)
}
