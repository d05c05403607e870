// Shape of kubernetes/kubernetes#127826 ("device manager: potential
// Double-Locking of Mutex"): podDevices.podDevices read-locks the embedded
// RWMutex and, for every container of the pod, calls containerDevices, which
// read-locks it again. A writer (insert, from a re-Allocate on container
// start) queued between the two read locks blocks the second RLock while it
// waits for the first.
package main

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

type deviceSet map[string]struct{}

func (s deviceSet) union(o deviceSet) deviceSet {
	for k := range o {
		s[k] = struct{}{}
	}
	return s
}

type ContainerAllocateResponse struct{ Envs map[string]string }

type deviceAllocateInfo struct {
	deviceIds map[int64][]string // NUMA node -> device IDs
	allocResp *ContainerAllocateResponse
}

type resourceAllocateInfo map[string]deviceAllocateInfo // keyed by resource name
type containerDevices map[string]resourceAllocateInfo   // keyed by container name

type podDevices struct {
	sync.RWMutex
	devs map[string]containerDevices // keyed by pod UID
}

func newPodDevices() *podDevices { return &podDevices{devs: map[string]containerDevices{}} }

func (pdev *podDevices) insert(podUID, contName, resource string, devices map[int64][]string, resp *ContainerAllocateResponse) {
	pdev.Lock()
	defer pdev.Unlock()
	if _, ok := pdev.devs[podUID]; !ok {
		pdev.devs[podUID] = containerDevices{}
	}
	if _, ok := pdev.devs[podUID][contName]; !ok {
		pdev.devs[podUID][contName] = resourceAllocateInfo{}
	}
	pdev.devs[podUID][contName][resource] = deviceAllocateInfo{deviceIds: devices, allocResp: resp}
}

// podDevices returns the devices allocated to all containers of a pod.
func (pdev *podDevices) podDevices(podUID, resource string) deviceSet {
	pdev.RLock()
	defer pdev.RUnlock()
	ret := deviceSet{}
	names := make([]string, 0, len(pdev.devs[podUID]))
	for contName := range pdev.devs[podUID] {
		names = append(names, contName)
	}
	sort.Strings(names)
	for _, contName := range names {
		time.Sleep(100 * time.Millisecond) // widen the window for the writer
		ret = ret.union(pdev.containerDevicesLocked(podUID, contName, resource))
	}
	return ret
}

// containerDevices returns the devices allocated to one container.
func (pdev *podDevices) containerDevices(podUID, contName, resource string) deviceSet {
	pdev.RLock()
	defer pdev.RUnlock()
	return pdev.containerDevicesLocked(podUID, contName, resource)
}

// containerDevicesLocked expects the caller to hold the lock (the fix proposed
// for #127826 in PR #136235/#136660).
func (pdev *podDevices) containerDevicesLocked(podUID, contName, resource string) deviceSet {
	ret := deviceSet{}
	info, ok := pdev.devs[podUID][contName][resource]
	if !ok {
		return ret
	}
	for _, ids := range info.deviceIds {
		for _, id := range ids {
			ret[id] = struct{}{}
		}
	}
	return ret
}

type ManagerImpl struct {
	mutex      sync.Mutex
	podDevices *podDevices
	healthy    map[string][]string
}

type Pod struct {
	UID        string
	Containers []string
}

// GetPodTopologyHints is called by the topology manager during admission.
func (m *ManagerImpl) GetPodTopologyHints(pod *Pod, resource string) []int64 {
	allocated := m.podDevices.podDevices(pod.UID, resource)
	if len(allocated) == 0 {
		return nil
	}
	return []int64{0} // the NUMA node the allocated devices live on
}

// allocateContainerResources re-issues Allocate for a container whose
// devices were not found in the checkpoint (GetDeviceRunContainerOptions).
func (m *ManagerImpl) allocateContainerResources(pod *Pod, container, resource string) {
	m.mutex.Lock()
	ids := m.healthy[resource][:1]
	m.mutex.Unlock()
	resp := &ContainerAllocateResponse{Envs: map[string]string{"NVIDIA_VISIBLE_DEVICES": ids[0]}}
	m.podDevices.insert(pod.UID, container, resource, map[int64][]string{0: ids}, resp)
}

func main() {
	const gpu = "nvidia.com/gpu"
	m := &ManagerImpl{podDevices: newPodDevices(), healthy: map[string][]string{gpu: {"GPU-7f3a", "GPU-91c2"}}}
	trainer := &Pod{UID: "5d1c0b7e", Containers: []string{"trainer", "sidecar"}}
	m.podDevices.insert(trainer.UID, "trainer", gpu, map[int64][]string{0: {"GPU-91c2"}}, nil)
	m.podDevices.insert(trainer.UID, "sidecar", gpu, map[int64][]string{}, nil)
	other := &Pod{UID: "a3e9f210", Containers: []string{"infer"}}

	done := make(chan struct{})
	go func() { // pod worker: container start finds no cached allocation
		time.Sleep(30 * time.Millisecond)
		m.allocateContainerResources(other, "infer", gpu)
		close(done)
	}()

	hints := m.GetPodTopologyHints(trainer, gpu) // admission of a restarted pod
	<-done
	fmt.Println("hints:", hints)
}
