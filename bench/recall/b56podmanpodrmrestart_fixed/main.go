// Fixed twin (PR #14976 applied). Project: containers/podman (libpod), v4.1/v4.2-dev, July 2022.
// Files: libpod/runtime_pod_linux.go (Runtime.removePod); libpod/container_api.go
// (Container.Cleanup, State); libpod/container_internal.go (handleRestartPolicy,
// checkDependenciesAndHandleError, checkDependenciesRunning); libpod/lock.
// Issues: containers/podman#14929 "deadlock(?) in podman rm(?)" and #14921
// "Deadlock when RestartPolicy is used"; fixed by PR containers/podman#14976
// "libpod: do not lock all containers on pod rm".
//
// Every libpod container and pod owns a lock from the lock manager (a SHM
// semaphore, modelled by a mutex behind the lock.Locker interface).
// `podman pod rm -f` runs Runtime.removePod, which locks the pod and then,
// looping over r.state.PodContainers(p), locks every container of the pod up
// front (infra first) and keeps them locked until the removal is done.
// Concurrently the conmon-spawned `podman container cleanup` of an
// application container with a restart policy runs Container.Cleanup: it
// locks that container, then handleRestartPolicy ->
// checkDependenciesAndHandleError -> checkDependenciesRunning asks each
// dependency (the pod's infra container) for its State(), which locks the
// dependency. pod rm holds infra and waits for the app container; cleanup
// holds the app container and waits for infra (AB-BA between two container
// locks). The fix stops removePod from taking all container locks at once;
// each container is locked only while it is itself being removed.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// ---- libpod/lock ----
type Locker interface {
	Lock()
	Unlock()
}

type shmLock struct{ mu sync.Mutex } // one SHM semaphore

func (l *shmLock) Lock()   { l.mu.Lock() }
func (l *shmLock) Unlock() { l.mu.Unlock() }

type shmLockManager struct{}

func (m *shmLockManager) AllocateLock() Locker { return &shmLock{} }

// ---- libpod ----
type ContainerStatus string

const ContainerStateRunning, ContainerStateExited ContainerStatus = "running", "exited"

type ContainerConfig struct {
	ID, Pod, RestartPolicy string
	Dependencies           []string
	IsInfra                bool
}

type Container struct {
	config  *ContainerConfig
	state   ContainerStatus
	lock    Locker
	runtime *Runtime
	batched bool
}

type Pod struct {
	id   string
	lock Locker
}

// inMemoryState stands in for the BoltDB/SQLite state.
type inMemoryState struct {
	ctrs    map[string]*Container
	podCtrs map[string][]string
}

func (s *inMemoryState) Container(id string) (*Container, error) {
	if c, ok := s.ctrs[id]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("no such container %s", id)
}

func (s *inMemoryState) PodContainers(p *Pod) (out []*Container, err error) {
	for _, id := range s.podCtrs[p.id] {
		out = append(out, s.ctrs[id])
	}
	return
}

type Runtime struct {
	state *inMemoryState
	locks *shmLockManager
}

func (c *Container) ID() string           { return c.config.ID }
func (c *Container) syncContainer() error { return nil }

// State returns the current state of the container
func (c *Container) State() (ContainerStatus, error) {
	if !c.batched {
		c.lock.Lock()
		defer c.lock.Unlock()
		if err := c.syncContainer(); err != nil {
			return "", err
		}
	}
	return c.state, nil
}

func (c *Container) checkDependenciesRunning() ([]string, error) {
	notRunning := []string{}
	for _, dep := range c.config.Dependencies {
		depCtr, err := c.runtime.state.Container(dep)
		if err != nil {
			return nil, err
		}
		// Check the status
		state, err := depCtr.State()
		if err == nil && state != ContainerStateRunning && !depCtr.config.IsInfra {
			notRunning = append(notRunning, dep)
		}
	}
	return notRunning, nil
}

func (c *Container) checkDependenciesAndHandleError() error {
	notRunning, err := c.checkDependenciesRunning()
	if err == nil && len(notRunning) > 0 {
		err = fmt.Errorf("dependencies %v of container %s not running", notRunning, c.ID())
	}
	return err
}

func (c *Container) handleRestartPolicy(ctx context.Context) (bool, error) {
	if c.config.RestartPolicy != "always" {
		return false, nil
	}
	// Need to check if dependencies are alive.
	if err := c.checkDependenciesAndHandleError(); err != nil {
		return false, err
	}
	c.state = ContainerStateRunning // c.start(ctx)
	return true, nil
}

// Cleanup unmounts all mount points in container and cleans up container storage
func (c *Container) Cleanup(ctx context.Context) error {
	if !c.batched {
		c.lock.Lock()
		defer c.lock.Unlock()
		_ = c.syncContainer()
	}
	time.Sleep(60 * time.Millisecond) // c.cleanup(ctx): network, storage, cgroups
	restarted, err := c.handleRestartPolicy(ctx)
	fmt.Println("cleanup done, restarted:", restarted)
	return err
}

func (r *Runtime) removePod(ctx context.Context, p *Pod, removeCtrs, force bool) error {
	p.lock.Lock()
	defer p.lock.Unlock()
	ctrs, _ := r.state.PodContainers(p)
	// Each container is locked only while it is itself being removed.
	for _, ctr := range ctrs {
		r.removeContainerInPod(ctr)
	}
	fmt.Println("pod", p.id, "removed")
	return nil
}

func (r *Runtime) removeContainerInPod(ctr *Container) {
	ctr.lock.Lock()
	defer ctr.lock.Unlock()
	_ = ctr.syncContainer()
	time.Sleep(20 * time.Millisecond) // state checks before removal
	ctr.state = ContainerStateExited
}

func main() {
	r := &Runtime{state: &inMemoryState{map[string]*Container{}, map[string][]string{}}, locks: &shmLockManager{}}
	pod := &Pod{id: "dbdb45542af1", lock: r.locks.AllocateLock()}
	infra := &Container{config: &ContainerConfig{ID: "ef964cc9f594", Pod: pod.id, IsInfra: true}, state: ContainerStateRunning, lock: r.locks.AllocateLock(), runtime: r}
	app := &Container{config: &ContainerConfig{ID: "36f1f1caf0d2", Pod: pod.id, Dependencies: []string{infra.ID()}, RestartPolicy: "always"}, state: ContainerStateExited, lock: r.locks.AllocateLock(), runtime: r}
	r.state.ctrs[infra.ID()], r.state.ctrs[app.ID()] = infra, app
	r.state.podCtrs[pod.id] = []string{infra.ID(), app.ID()}

	wg := sync.WaitGroup{}
	wg.Add(2)
	go func() { // podman container cleanup 36f1f1caf0d2 (spawned by conmon)
		defer wg.Done()
		_ = app.Cleanup(context.Background())
	}()
	go func() { // podman pod rm -f dbdb45542af1
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		_ = r.removePod(context.Background(), pod, true, true)
	}()
	wg.Wait()
}
