// Project: containers/podman (libpod/runtime_ctr.go Runtime.RemoveContainer and removeContainer, libpod/runtime_ctr.go Runtime.GetContainer, libpod/container_inspect.go Container.Inspect, libpod/networking_linux.go getContainerNetworkInfo), podman 3.x, 2021-2022 (issue #10090, deadlocks under the docker-compatible API used by the gitlab runner; fixed by PR #13311 "Remove the runtime lock", podman 4.x; the exact inspect path is approximate).
// Bug: RemoveContainer write-locks the Runtime's lock (r.lock) for the whole removal and then takes the container lock, while Container.Inspect holds the container lock and, for a container that joins another container's network namespace, looks that container up through Runtime.GetContainer, which read-locks r.lock. Concurrent "inspect" and "rm" API calls on the same container in the podman service deadlock AB-BA between r.lock and the container lock; the fix removes the runtime lock from these paths.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

var (
	ErrRuntimeStopped = errors.New("runtime has already been stopped")
	ErrNoSuchCtr      = errors.New("no such container")
	ErrCtrRemoved     = errors.New("container has already been removed")
)

// lock.Locker, implemented by the SHM locks and by lock.Mutex of the
// in-memory lock manager.
type Locker interface {
	ID() uint32
	Lock()
	Unlock()
}

type Mutex struct {
	id        uint32
	lock      sync.Mutex
	allocated bool
}

func (m *Mutex) ID() uint32 { return m.id }
func (m *Mutex) Lock()      { m.lock.Lock() }
func (m *Mutex) Unlock()    { m.lock.Unlock() }

// inMemoryState stands in for the BoltDB state.
type inMemoryState struct {
	mu         sync.Mutex
	containers map[string]*Container
}

func (s *inMemoryState) Container(id string) (*Container, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.containers[id]
	if !ok {
		return nil, ErrNoSuchCtr
	}
	return c, nil
}

func (s *inMemoryState) HasContainer(id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.containers[id]
	return ok, nil
}

func (s *inMemoryState) RemoveContainer(ctr *Container) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.containers, ctr.ID())
	return nil
}

type Runtime struct {
	state       *inMemoryState
	lockManager []*Mutex
	valid       bool
}

// GetContainer retrieves a container by its ID.
func (r *Runtime) GetContainer(id string) (*Container, error) {
	if !r.valid {
		return nil, ErrRuntimeStopped
	}
	return r.state.Container(id)
}

// RemoveContainer removes the given container. If force is specified, the
// container will be stopped first.
func (r *Runtime) RemoveContainer(ctx context.Context, c *Container, force bool, removeVolume bool, timeout *uint) error {
	return r.removeContainer(ctx, c, force, removeVolume, false, timeout)
}

func (r *Runtime) removeContainer(ctx context.Context, c *Container, force, removeVolume, removePod bool, timeout *uint) error {
	if !c.valid {
		if ok, _ := r.state.HasContainer(c.ID()); !ok {
			return nil
		}
	}

	// For pod removal, the container is already locked by the caller.
	if !removePod {
		c.lock.Lock()
		defer c.lock.Unlock()
	}

	if !r.valid {
		return ErrRuntimeStopped
	}
	if err := c.syncContainer(); err != nil {
		return err
	}
	if c.state.State == "running" {
		if !force {
			return fmt.Errorf("cannot remove container %s as it is running", c.ID())
		}
		c.state.State = "stopped" // c.stop(timeout)
	}
	if err := r.state.RemoveContainer(c); err != nil {
		return err
	}
	c.valid = false
	return nil
}

type ContainerConfig struct {
	ID       string
	Name     string
	NetNsCtr string
	LockID   uint32
}

type ContainerState struct {
	State  string
	NetNS  string
	IPAddr string
}

type Container struct {
	config  *ContainerConfig
	state   *ContainerState
	lock    Locker
	runtime *Runtime
	batched bool
	valid   bool
}

func (c *Container) ID() string { return c.config.ID }

// syncContainer reads the latest container state from the database.
// Must be called with the container locked.
func (c *Container) syncContainer() error {
	time.Sleep(30 * time.Millisecond) // r.state.UpdateContainer(c) and the runtime status
	if !c.valid {
		return ErrCtrRemoved
	}
	return nil
}

type InspectNetworkSettings struct {
	SandboxKey string
	IPAddress  string
}

type InspectContainerData struct {
	ID              string
	Name            string
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
	data := &InspectContainerData{ID: c.config.ID, Name: c.config.Name, State: c.state.State}
	networkConfig, err := c.getContainerNetworkInfo()
	if err != nil {
		return nil, err
	}
	data.NetworkSettings = networkConfig
	return data, nil
}

// getContainerNetworkInfo produces the network settings for inspect.
func (c *Container) getContainerNetworkInfo() (*InspectNetworkSettings, error) {
	if c.config.NetNsCtr != "" {
		netNsCtr, err := c.runtime.GetContainer(c.config.NetNsCtr)
		if err != nil {
			return nil, err
		}
		return &InspectNetworkSettings{SandboxKey: netNsCtr.state.NetNS, IPAddress: netNsCtr.state.IPAddr}, nil
	}
	return &InspectNetworkSettings{SandboxKey: c.state.NetNS, IPAddress: c.state.IPAddr}, nil
}

func main() {
	st := &inMemoryState{containers: map[string]*Container{}}
	r := &Runtime{state: st, valid: true}
	newCtr := func(id, netNsCtr string) *Container {
		l := &Mutex{id: uint32(len(r.lockManager)), allocated: true} // lockManager.AllocateLock()
		r.lockManager = append(r.lockManager, l)
		c := &Container{
			config:  &ContainerConfig{ID: id, Name: id, NetNsCtr: netNsCtr, LockID: l.ID()},
			state:   &ContainerState{State: "running", NetNS: "/run/netns/" + id, IPAddr: "10.88.0.5"},
			lock:    l,
			runtime: r,
			valid:   true,
		}
		st.containers[id] = c
		return c
	}
	// The gitlab runner's docker executor: a service container and a build
	// container that joins its network namespace (--network container:svc).
	newCtr("runner-svc", "")
	build := newCtr("runner-build", "runner-svc")

	done := make(chan struct{}, 2)
	go func() { // GET /containers/runner-build/json
		data, err := build.Inspect(false)
		if err == nil {
			fmt.Println("inspect:", data.ID, data.NetworkSettings.SandboxKey)
		}
		done <- struct{}{}
	}()
	time.Sleep(10 * time.Millisecond)
	go func() { // DELETE /containers/runner-build?force=1
		fmt.Println("rm:", r.RemoveContainer(context.Background(), build, true, false, nil))
		done <- struct{}{}
	}()
	<-done
	<-done
	fmt.Println("ok")
}
