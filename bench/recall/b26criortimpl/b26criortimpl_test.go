// Project: cri-o (internal/oci/oci.go)
// Bug: Runtime.RuntimeImpl keeps runtimeImplMapMutex read-locked for the whole
// lookup; on a cache miss (containers restored after a crio restart) it builds
// the implementation and stores it, taking runtimeImplMapMutex.Lock.
// Fix: drop the read lock after the lookup and re-check under the write lock.
package b26criortimpl

import (
	"fmt"
	"sync"
	"testing"
)

const (
	RuntimeTypeOCI = "oci"
	RuntimeTypeVM  = "vm"
)

type RuntimeHandler struct {
	RuntimePath string
	RuntimeType string
	RuntimeRoot string
}

type Config struct {
	DefaultRuntime string
	Runtimes       map[string]*RuntimeHandler
}

type ContainerState struct {
	Status   string
	Pid      int
	ExitCode int32
}

type Container struct {
	id             string
	name           string
	runtimeHandler string
	opLock         sync.RWMutex
	state          *ContainerState
}

func (c *Container) ID() string { return c.id }

func (c *Container) Description() string {
	return fmt.Sprintf("%s/%s", c.name, c.id[:12])
}

type RuntimeImpl interface {
	CreateContainer(c *Container, cgroupParent string) error
	UpdateContainerStatus(c *Container) error
	DeleteContainer(c *Container) error
}

type runtimeOCI struct {
	r    *Runtime
	path string
	root string
}

func (r *runtimeOCI) CreateContainer(c *Container, cgroupParent string) error {
	c.opLock.Lock()
	defer c.opLock.Unlock()
	c.state.Status = "created"
	c.state.Pid = 31337
	return nil
}

func (r *runtimeOCI) UpdateContainerStatus(c *Container) error {
	c.opLock.Lock()
	defer c.opLock.Unlock()
	if c.state.Pid > 0 {
		c.state.Status = "running"
	}
	return nil
}

func (r *runtimeOCI) DeleteContainer(c *Container) error {
	c.opLock.Lock()
	defer c.opLock.Unlock()
	c.state.Status = "stopped"
	return nil
}

type Runtime struct {
	config              *Config
	runtimeImplMap      map[string]RuntimeImpl
	runtimeImplMapMutex sync.RWMutex
}

func New(c *Config) *Runtime {
	return &Runtime{config: c, runtimeImplMap: make(map[string]RuntimeImpl)}
}

func (r *Runtime) getRuntimeHandler(handler string) (*RuntimeHandler, error) {
	if handler == "" {
		handler = r.config.DefaultRuntime
	}
	rh, ok := r.config.Runtimes[handler]
	if !ok {
		return nil, fmt.Errorf("failed to find runtime handler %s from runtime list %v", handler, r.config.Runtimes)
	}
	return rh, nil
}

func (r *Runtime) newRuntimeImpl(c *Container) (RuntimeImpl, error) {
	rh, err := r.getRuntimeHandler(c.runtimeHandler)
	if err != nil {
		return nil, err
	}
	if rh.RuntimeType == RuntimeTypeVM {
		return nil, fmt.Errorf("runtime type %q not supported for %s", rh.RuntimeType, c.Description())
	}
	return &runtimeOCI{r: r, path: rh.RuntimePath, root: rh.RuntimeRoot}, nil
}

func (r *Runtime) RuntimeImpl(c *Container) (RuntimeImpl, error) {
	r.runtimeImplMapMutex.RLock()
	defer r.runtimeImplMapMutex.RUnlock()
	impl, ok := r.runtimeImplMap[c.ID()]
	if ok {
		return impl, nil
	}
	impl, err := r.newRuntimeImpl(c)
	if err != nil {
		return nil, err
	}
	r.runtimeImplMapMutex.Lock()
	r.runtimeImplMap[c.ID()] = impl
	r.runtimeImplMapMutex.Unlock()
	return impl, nil
}

func (r *Runtime) CreateContainer(c *Container, cgroupParent string) error {
	impl, err := r.newRuntimeImpl(c)
	if err != nil {
		return err
	}
	r.runtimeImplMapMutex.Lock()
	r.runtimeImplMap[c.ID()] = impl
	r.runtimeImplMapMutex.Unlock()
	return impl.CreateContainer(c, cgroupParent)
}

func (r *Runtime) UpdateContainerStatus(c *Container) error {
	impl, err := r.RuntimeImpl(c)
	if err != nil {
		return err
	}
	return impl.UpdateContainerStatus(c)
}

func (r *Runtime) DeleteContainer(c *Container) error {
	impl, err := r.RuntimeImpl(c)
	if err != nil {
		return err
	}
	defer func() {
		r.runtimeImplMapMutex.Lock()
		delete(r.runtimeImplMap, c.ID())
		r.runtimeImplMapMutex.Unlock()
	}()
	return impl.DeleteContainer(c)
}

func TestProbe(t *testing.T) {
	cfg := &Config{
		DefaultRuntime: "runc",
		Runtimes: map[string]*RuntimeHandler{
			"runc": {RuntimePath: "/usr/bin/runc", RuntimeType: RuntimeTypeOCI, RuntimeRoot: "/run/runc"},
		},
	}
	ctr := &Container{id: "5f2b9c0e8a7d41c3b6e1", name: "k8s_nginx_web-0", state: &ContainerState{}}
	r := New(cfg)
	if err := r.CreateContainer(ctr, "kubepods.slice"); err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateContainerStatus(ctr); err != nil {
		t.Fatal(err)
	}

	// crio restarts: containers are restored from storage, runtime map is empty.
	r = New(cfg)
	if err := r.UpdateContainerStatus(ctr); err != nil {
		t.Fatal(err)
	}
	if err := r.DeleteContainer(ctr); err != nil {
		t.Fatal(err)
	}
	if ctr.state.Status != "stopped" {
		t.Fatalf("unexpected state %q", ctr.state.Status)
	}
}
