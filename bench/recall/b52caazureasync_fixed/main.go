// Project: kubernetes/autoscaler, cluster-autoscaler 1.18.2 (July 2020), Azure
// cloud provider. Files/functions: cloudprovider/azure/azure_scale_set.go
// (ScaleSet.DeleteNodes, DeleteInstances, Nodes), azure_manager.go
// (AzureManager.Refresh, forceRefresh), azure_cache.go (asgCache.regenerate),
// azure_cloud_provider.go (Refresh), retry.Error of the legacy cloud provider.
// Regression from PR kubernetes/autoscaler#3284 ("synchronize scale set
// instance deletions to avoid 409 conflict errors"); fixed by PR
// kubernetes/autoscaler#3296 "Fix possible lock issue and add timeouts for
// queuing of long running operations".
//
// #3284 serialized VMSS deletes by taking the scale set's instanceMutex
// around DeleteInstancesAsync, with the unlock after the error check: when the
// ARM call fails (409 conflict, throttling, timeout) DeleteInstances returns
// rerr.Error() with instanceMutex held. The autoscaler's next loop refreshes
// the cloud provider (Refresh -> forceRefresh -> asgCache.regenerate, which
// calls Nodes() on every scale set) and ScaleSet.Nodes blocks on instanceMutex
// forever. The fix unlocks right after the call, before checking the error.
package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Error is k8s.io/legacy-cloud-providers/azure/retry.Error.
type Error struct {
	Retriable      bool
	HTTPStatusCode int
	RawError       error
}

func (err *Error) Error() error {
	return fmt.Errorf("Retriable: %v, HTTPStatusCode: %d, RawError: %w", err.Retriable, err.HTTPStatusCode, err.RawError)
}

type Instance struct{ Id string }
type Node struct{ ProviderID string }

type NodeGroup interface {
	Id() string
	Nodes() ([]Instance, error)
}

type azureRef struct{ Name string }

type vmssClient struct {
	conflict bool
	vms      map[string][]string
}

func (c *vmssClient) DeleteInstancesAsync(resourceGroup, name string, ids []string) (*struct{}, *Error) {
	if c.conflict {
		return nil, &Error{HTTPStatusCode: 409, RawError: errors.New("Operation 'delete' is not allowed since the Virtual Machine Scale Set is in the middle of another operation")}
	}
	return &struct{}{}, nil
}

func (c *vmssClient) ListVMs(resourceGroup, name string) []string { return c.vms[name] }

type asgCache struct {
	registeredAsgs []NodeGroup
	instanceToAsg  map[azureRef]NodeGroup
	mutex          sync.Mutex
}

func (m *asgCache) FindForInstance(instance *azureRef) (NodeGroup, error) {
	m.mutex.Lock()
	defer m.mutex.Unlock()
	return m.instanceToAsg[azureRef{Name: strings.ToLower(instance.Name)}], nil
}

func (m *asgCache) regenerate() error {
	m.mutex.Lock()
	defer m.mutex.Unlock()
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
	resourceGroup string
	vmssClient    *vmssClient
	asgCache      *asgCache
}

func (m *AzureManager) GetAsgForInstance(instance *azureRef) (NodeGroup, error) {
	return m.asgCache.FindForInstance(instance)
}

func (m *AzureManager) Refresh() error { return m.forceRefresh() }

func (m *AzureManager) forceRefresh() error { return m.asgCache.regenerate() }

type ScaleSet struct {
	azureRef
	manager             *AzureManager
	sizeMutex           sync.Mutex
	curSize             int64
	instanceMutex       sync.Mutex
	instanceCache       []Instance
	lastInstanceRefresh time.Time
}

func (scaleSet *ScaleSet) Id() string { return scaleSet.Name }

func (scaleSet *ScaleSet) getCurSize() (int64, error) {
	scaleSet.sizeMutex.Lock()
	defer scaleSet.sizeMutex.Unlock()
	return scaleSet.curSize, nil
}

func (scaleSet *ScaleSet) Nodes() ([]Instance, error) {
	curSize, err := scaleSet.getCurSize()
	if err != nil {
		return nil, err
	}
	scaleSet.instanceMutex.Lock()
	defer scaleSet.instanceMutex.Unlock()
	if int64(len(scaleSet.instanceCache)) == curSize && scaleSet.lastInstanceRefresh.Add(5*time.Minute).After(time.Now()) {
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

	scaleSet.instanceMutex.Lock()
	future, rerr := scaleSet.manager.vmssClient.DeleteInstancesAsync(scaleSet.manager.resourceGroup, commonAsg.Id(), instanceIDs)
	scaleSet.instanceMutex.Unlock()
	if rerr != nil {
		return rerr.Error()
	}

	scaleSet.sizeMutex.Lock()
	scaleSet.curSize -= int64(len(instanceIDs))
	scaleSet.sizeMutex.Unlock()
	go func() { _ = future }() // waitForDeleteInstances
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

func (azure *AzureCloudProvider) Refresh() error { return azure.azureManager.Refresh() }

const vm = "azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/pool0/virtualMachines/"

func main() {
	manager := &AzureManager{resourceGroup: "rg", vmssClient: &vmssClient{conflict: true, vms: map[string][]string{"pool0": {vm + "0", vm + "1"}}}}
	ss := &ScaleSet{azureRef: azureRef{Name: "pool0"}, manager: manager, curSize: 2}
	manager.asgCache = &asgCache{registeredAsgs: []NodeGroup{ss}, instanceToAsg: map[azureRef]NodeGroup{
		{Name: strings.ToLower(vm + "0")}: ss, {Name: strings.ToLower(vm + "1")}: ss}}
	provider := &AzureCloudProvider{azureManager: manager}

	// RunOnce: scale down an empty node; ARM answers 409 Conflict.
	fmt.Println("scale down:", ss.DeleteNodes([]*Node{{ProviderID: vm + "1"}}))
	// Next RunOnce: the cloud provider is refreshed first.
	fmt.Println("refresh:", provider.Refresh())
}
