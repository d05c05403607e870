// containers/podman, libpod/pod_api.go (Pod.Status,
// containerStatusFromContainers) and libpod/container_inspect.go +
// networking_common.go (Container.Inspect, inspectLocked,
// getContainerInspectData, getContainerNetworkInfo). Reported as
// containers/podman#16326 "Deadlock between 'pod ps' and 'container inspect'
// commands", fixed by PR #16327.
//
// `podman pod ps` asks every pod for its Status: Pod.Status holds the pod lock
// and containerStatusFromContainers locks all of the pod's containers in the
// order the state returns them (line 159) - infra container first - before
// syncing any of them. `podman inspect <app container>` locks the app
// container in Inspect, syncs it, and getContainerNetworkInfo, because the app
// container joins the infra container's network namespace (NetNsCtr), locks
// the infra container too (line 231). pod ps holds infra and waits for app;
// inspect holds app and waits for infra. Both processes hang, and so does
// every later podman command touching the pod. The locks are libpod's
// lock.Locker (SHM semaphores); here a mutex stands behind the same interface.
// The fix makes containerStatusFromContainers call ctr.State() per container,
// which locks and syncs one container at a time.
//
// FIXED TWIN: same program with the project's fix applied; the line numbers
// above refer to the unfixed probe in ../b39podmanpodpsinspect/main.go.
package main

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Locker is libpod/lock.Locker.
type Locker interface {
	ID() uint32
	Lock()
	Unlock()
	Free() error
}

// SHMLock stands in for the shared-memory semaphore behind lock.Locker.
type SHMLock struct {
	lockID uint32
	m      sync.Mutex
}

func (l *SHMLock) ID() uint32  { return l.lockID }
func (l *SHMLock) Lock()       { l.m.Lock() }
func (l *SHMLock) Unlock()     { l.m.Unlock() }
func (l *SHMLock) Free() error { return nil }

type ContainerStatus int

const (
	ContainerStateUnknown ContainerStatus = iota
	ContainerStateRunning
)

func (s ContainerStatus) String() string {
	if s == ContainerStateRunning {
		return "running"
	}
	return "unknown"
}

type ContainerConfig struct {
	ID       string
	Name     string
	Pod      string
	NetNsCtr string
}

type ContainerState struct {
	State     ContainerStatus
	NetworkIP string
}

type Container struct {
	config  *ContainerConfig
	state   *ContainerState
	lock    Locker
	runtime *Runtime
	batched bool
	valid   bool
}

type Pod struct {
	id      string
	lock    Locker
	runtime *Runtime
	valid   bool
}

// State is libpod's state interface (BoltState in podman).
type State interface {
	Container(id string) (*Container, error)
	PodContainers(pod *Pod) ([]*Container, error)
	UpdateContainer(ctr *Container) error
}

type inMemoryState struct {
	ctrs map[string]*Container
}

func (s *inMemoryState) Container(id string) (*Container, error) {
	if c, ok := s.ctrs[id]; ok {
		return c, nil
	}
	return nil, errors.New("no such container")
}

// PodContainers returns the pod's containers in key order, like bolt does.
func (s *inMemoryState) PodContainers(pod *Pod) ([]*Container, error) {
	var res []*Container
	for _, c := range s.ctrs {
		if c.config.Pod == pod.id {
			res = append(res, c)
		}
	}
	sort.Slice(res, func(i, j int) bool { return res[i].config.ID < res[j].config.ID })
	return res, nil
}

// UpdateContainer re-reads the container's state from the database.
func (s *inMemoryState) UpdateContainer(ctr *Container) error {
	time.Sleep(30 * time.Millisecond) // DB read plus the OCI runtime's state query
	return nil
}

type Runtime struct {
	state State
}

func (r *Runtime) GetContainer(id string) (*Container, error) { return r.state.Container(id) }

// syncContainer gets the container's current state from the database. Must
// be called with the container locked.
func (c *Container) syncContainer() error {
	return c.runtime.state.UpdateContainer(c)
}

func (c *Container) ID() string { return c.config.ID }

// Status gets the status of all containers in the pod.
func (p *Pod) Status() (map[string]ContainerStatus, error) {
	p.lock.Lock()
	defer p.lock.Unlock()

	if !p.valid {
		return nil, errors.New("pod removed")
	}
	allCtrs, err := p.runtime.state.PodContainers(p)
	if err != nil {
		return nil, err
	}
	return containerStatusFromContainers(allCtrs)
}

func containerStatusFromContainers(allCtrs []*Container) (map[string]ContainerStatus, error) {
	status := make(map[string]ContainerStatus, len(allCtrs))
	for _, ctr := range allCtrs {
		state, err := ctr.State()

		if err != nil {
			return nil, err
		}

		status[ctr.ID()] = state
	}

	return status, nil
}

// State returns the current state of the container.
func (c *Container) State() (ContainerStatus, error) {
	if !c.batched {
		c.lock.Lock()
		defer c.lock.Unlock()
		if err := c.syncContainer(); err != nil {
			return ContainerStateUnknown, err
		}
	}
	return c.state.State, nil
}

type InspectNetworkSettings struct{ IPAddress string }

type InspectContainerData struct {
	ID              string
	State           string
	NetworkSettings *InspectNetworkSettings
}

// Inspect a container for low-level information.
func (c *Container) Inspect(size bool) (*InspectContainerData, error) {
	if !c.batched {
		c.lock.Lock()
		defer c.lock.Unlock()
		if err := c.syncContainer(); err != nil {
			return nil, err
		}
	}
	return c.inspectLocked(size)
}

func (c *Container) inspectLocked(size bool) (*InspectContainerData, error) {
	return c.getContainerInspectData(size)
}

func (c *Container) getContainerInspectData(size bool) (*InspectContainerData, error) {
	data := &InspectContainerData{ID: c.ID(), State: c.state.State.String()}
	networkConfig, err := c.getContainerNetworkInfo()
	if err != nil {
		return nil, err
	}
	data.NetworkSettings = networkConfig
	_ = size
	return data, nil
}

// Produce an InspectNetworkSettings containing information on the container
// network.
func (c *Container) getContainerNetworkInfo() (*InspectNetworkSettings, error) {
	if c.config.NetNsCtr != "" {
		netNsCtr, err := c.runtime.GetContainer(c.config.NetNsCtr)
		if err != nil {
			return nil, err
		}
		// see https://github.com/containers/podman/issues/10090
		// the container has to be locked for syncContainer()
		netNsCtr.lock.Lock()
		defer netNsCtr.lock.Unlock()
		// Have to sync to ensure that state is populated
		if err := netNsCtr.syncContainer(); err != nil {
			return nil, err
		}
		return netNsCtr.getContainerNetworkInfo()
	}
	return &InspectNetworkSettings{IPAddress: c.state.NetworkIP}, nil
}

func main() {
	rt := &Runtime{}
	infra := &Container{config: &ContainerConfig{ID: "1f0c3a", Name: "my-pod-1-infra", Pod: "pod1"},
		state: &ContainerState{State: ContainerStateRunning, NetworkIP: "10.88.0.7"}, lock: &SHMLock{lockID: 1}, runtime: rt, valid: true}
	app := &Container{config: &ContainerConfig{ID: "9e4b7d", Name: "my-pod-1-app", Pod: "pod1", NetNsCtr: "1f0c3a"},
		state: &ContainerState{State: ContainerStateRunning}, lock: &SHMLock{lockID: 2}, runtime: rt, valid: true}
	rt.state = &inMemoryState{ctrs: map[string]*Container{infra.ID(): infra, app.ID(): app}}
	pod := &Pod{id: "pod1", lock: &SHMLock{lockID: 0}, runtime: rt, valid: true}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // podman inspect my-pod-1-app
		defer wg.Done()
		data, err := app.Inspect(false)
		if err == nil {
			fmt.Println("inspect:", data.ID, data.State, data.NetworkSettings.IPAddress)
		}
	}()
	time.Sleep(10 * time.Millisecond)
	go func() { // podman pod ps
		defer wg.Done()
		st, err := pod.Status()
		fmt.Println("pod ps:", len(st), err)
	}()
	wg.Wait()
}
