// Project: cri-o (internal/oci: Runtime / runtimeOCI / Container.opLock).
// Bug (approximate, from memory): oci.Container has an opLock (sync.Mutex)
// that serialises runtime operations on a container. runtimeOCI.StopContainer
// took c.opLock and then called the exported UpdateContainerStatus(c), which
// takes c.opLock itself, so StopContainer on a running container hung the
// CRI StopContainer / StopPodSandbox call forever. Exact issue/PR not
// remembered (approximate). Fix: call the unexported, lock-free
// updateContainerStatus(c) from the locked path.
package crio_stop

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

const (
	ContainerStateCreated = "created"
	ContainerStateRunning = "running"
	ContainerStateStopped = "stopped"
)

type ContainerState struct {
	Status   string
	Pid      int
	Finished time.Time
}

type Container struct {
	id       string
	name     string
	runtime  string
	opLock   sync.Mutex
	state    *ContainerState
	stopping bool
	// procAlive is what `runc state` would report.
	procAlive bool
}

func (c *Container) ID() string { return c.id }

// RuntimeImpl is an interface used by the caller to interact with the
// container runtime.
type RuntimeImpl interface {
	StopContainer(ctx context.Context, c *Container, timeout int64) error
	UpdateContainerStatus(ctx context.Context, c *Container) error
}

// Runtime is the generic structure holding runtime handlers.
type Runtime struct {
	runtimeImplMap map[string]RuntimeImpl
	sync.Mutex
}

func (r *Runtime) RuntimeImpl(c *Container) (RuntimeImpl, error) {
	r.Lock()
	defer r.Unlock()
	impl, ok := r.runtimeImplMap[c.runtime]
	if !ok {
		return nil, errors.New("runtime handler not found: " + c.runtime)
	}
	return impl, nil
}

// StopContainer stops a container with a timeout.
func (r *Runtime) StopContainer(ctx context.Context, c *Container, timeout int64) error {
	impl, err := r.RuntimeImpl(c)
	if err != nil {
		return err
	}
	return impl.StopContainer(ctx, c, timeout)
}

// runtimeOCI is the Runtime interface implementation relying on conmon.
type runtimeOCI struct {
	path string
}

// UpdateContainerStatus refreshes the status of the container.
func (r *runtimeOCI) UpdateContainerStatus(ctx context.Context, c *Container) error {
	c.opLock.Lock() // DEADLOCK HERE
	defer c.opLock.Unlock()
	return r.updateContainerStatus(ctx, c)
}

// updateContainerStatus expects c.opLock to be held.
func (r *runtimeOCI) updateContainerStatus(ctx context.Context, c *Container) error {
	if c.procAlive {
		c.state.Status = ContainerStateRunning
	} else {
		c.state.Status = ContainerStateStopped
		c.state.Finished = time.Now()
	}
	return nil
}

func (r *runtimeOCI) kill(c *Container) {
	c.procAlive = false
}

// StopContainer stops a container. Timeout is given in seconds.
func (r *runtimeOCI) StopContainer(ctx context.Context, c *Container, timeout int64) error {
	c.opLock.Lock()
	defer c.opLock.Unlock()

	if err := r.UpdateContainerStatus(ctx, c); err != nil {
		return err
	}
	if c.state.Status == ContainerStateStopped {
		return nil
	}
	c.stopping = true
	r.kill(c)
	return r.updateContainerStatus(ctx, c)
}

// ---- server ----

type Server struct {
	runtime *Runtime
	ctrs    map[string]*Container
}

func (s *Server) StopContainer(ctx context.Context, id string, timeout int64) error {
	c, ok := s.ctrs[id]
	if !ok {
		return errors.New("could not find container " + id)
	}
	return s.runtime.StopContainer(ctx, c, timeout)
}

func TestStopContainer(t *testing.T) {
	rt := &Runtime{runtimeImplMap: map[string]RuntimeImpl{"runc": &runtimeOCI{path: "/usr/bin/runc"}}}
	c := &Container{id: "abc123", name: "k8s_nginx", runtime: "runc",
		state: &ContainerState{Status: ContainerStateRunning, Pid: 77}, procAlive: true}
	s := &Server{runtime: rt, ctrs: map[string]*Container{c.id: c}}

	var wg sync.WaitGroup
	var err error
	wg.Add(1)
	go func() { // the CRI gRPC handler goroutine
		defer wg.Done()
		err = s.StopContainer(context.Background(), "abc123", 10)
	}()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if c.state.Status != ContainerStateStopped {
		t.Fatalf("state %s", c.state.Status)
	}
}
