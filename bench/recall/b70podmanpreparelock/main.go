// Command b70podmanpreparelock reproduces a self-deadlock modelled on
// Podman's libpod container and pod start paths (libpod/container_api.go,
// libpod/pod_api.go), no specific upstream bug.
//
// Container.prepareToStart locks the container and syncs its state. It
// hands the lock to its caller: a deferred closure that captures the
// receiver unlocks c.lock only when prepareToStart returns an error, so on
// success the container stays locked and the caller is responsible for
// unlocking it. Pod.startInitContainers follows that contract, starts the
// container with the lock-held helper start, and then, because the init
// container has a healthcheck, asks for its status through the public
// HealthCheckStatus before unlocking. HealthCheckStatus takes c.lock
// itself, so the goroutine blocks on the lock prepareToStart left held for
// it.
//
// The fix calls the unexported healthCheckStatus, which expects the caller
// to hold the container lock.
package main

import (
	"context"
	"fmt"
	"sync"
)

type ContainerStatus int

const (
	ContainerStateConfigured ContainerStatus = iota
	ContainerStateCreated
	ContainerStateRunning
	ContainerStateStopped
	ContainerStateExited
)

type HealthCheckConfig struct {
	Test []string
}

type ContainerConfig struct {
	ID          string
	Name        string
	Pod         string
	InitCtr     bool
	HealthCheck *HealthCheckConfig
}

type ContainerState struct {
	State        ContainerStatus
	HealthStatus string
}

type Container struct {
	config *ContainerConfig
	state  *ContainerState
	lock   sync.Mutex
	valid  bool
}

func (c *Container) syncContainer() error {
	if !c.valid {
		return fmt.Errorf("container %s has been removed", c.config.ID)
	}
	return nil
}

func (c *Container) ensureState(states ...ContainerStatus) bool {
	for _, s := range states {
		if c.state.State == s {
			return true
		}
	}
	return false
}

// prepareToStart locks and syncs the container. On success the container
// is returned locked and the caller must unlock it.
func (c *Container) prepareToStart(ctx context.Context) (retErr error) {
	c.lock.Lock()
	defer func() {
		if retErr != nil {
			c.lock.Unlock()
		}
	}()
	if err := c.syncContainer(); err != nil {
		return err
	}
	if !c.ensureState(ContainerStateConfigured, ContainerStateCreated, ContainerStateStopped) {
		return fmt.Errorf("container %s must be in created or stopped state", c.config.ID)
	}
	return ctx.Err()
}

func (c *Container) start(ctx context.Context) error {
	c.state.State = ContainerStateRunning
	if c.config.HealthCheck != nil {
		c.state.HealthStatus = "starting"
	}
	return nil
}

func (c *Container) HealthCheckStatus() (string, error) {
	c.lock.Lock()
	defer c.lock.Unlock()
	return c.healthCheckStatus()
}

func (c *Container) healthCheckStatus() (string, error) {
	if c.config.HealthCheck == nil {
		return "", fmt.Errorf("container %s has no healthcheck", c.config.ID)
	}
	if err := c.syncContainer(); err != nil {
		return "", err
	}
	return c.state.HealthStatus, nil
}

type Pod struct {
	id         string
	containers []*Container
}

func (p *Pod) startInitContainers(ctx context.Context) error {
	for _, ctr := range p.containers {
		if !ctr.config.InitCtr {
			continue
		}
		if err := ctr.prepareToStart(ctx); err != nil {
			return err
		}
		err := ctr.start(ctx)
		if err == nil && ctr.config.HealthCheck != nil {
			var status string
			status, err = ctr.HealthCheckStatus()
			fmt.Printf("init container %s health: %s\n", ctr.config.Name, status)
		}
		ctr.lock.Unlock()
		if err != nil {
			return fmt.Errorf("starting init container %s: %w", ctr.config.ID, err)
		}
	}
	return nil
}

func (p *Pod) Start(ctx context.Context) (map[string]error, error) {
	errs := map[string]error{}
	if err := p.startInitContainers(ctx); err != nil {
		return errs, err
	}
	for _, ctr := range p.containers {
		if ctr.config.InitCtr {
			continue
		}
		if err := ctr.prepareToStart(ctx); err != nil {
			errs[ctr.config.ID] = err
			continue
		}
		errs[ctr.config.ID] = ctr.start(ctx)
		ctr.lock.Unlock()
	}
	return errs, nil
}

type Runtime struct {
	pods map[string]*Pod
}

func (r *Runtime) StartPod(ctx context.Context, id string) error {
	errs, err := r.pods[id].Start(ctx)
	for ctr, e := range errs {
		if e != nil {
			fmt.Printf("container %s: %v\n", ctr, e)
		}
	}
	return err
}

func newCtr(id, name string, init bool, hc *HealthCheckConfig) *Container {
	cfg := &ContainerConfig{ID: id, Name: name, Pod: "web-pod", InitCtr: init, HealthCheck: hc}
	return &Container{config: cfg, state: &ContainerState{State: ContainerStateCreated}, valid: true}
}

func main() {
	pod := &Pod{id: "web-pod", containers: []*Container{
		newCtr("3f1c", "web-pod-infra", false, nil),
		newCtr("8a2d", "migrate-db", true, &HealthCheckConfig{Test: []string{"CMD", "true"}}),
		newCtr("c07e", "web", false, nil),
	}}
	rt := &Runtime{pods: map[string]*Pod{pod.id: pod}}
	if err := rt.StartPod(context.Background(), "web-pod"); err != nil {
		fmt.Println("start pod:", err)
		return
	}
	fmt.Println("pod web-pod started")
}
