// Command b70criostopunlock reproduces a lock-order inversion modelled on
// CRI-O's container server and OCI container (internal/lib
// ContainerServer, internal/oci Container with its opLock), no specific
// upstream bug.
//
// ContainerServer.StopContainer takes the server's stateLock, looks the
// container up, and then takes the container's opLock for the duration of
// the stop. Waiting for the process to exit can take the whole stop
// timeout, so waitContainerStopped "lets other API calls through" by
// releasing the caller's stateLock while it polls and re-taking it before
// returning, all while the caller still holds ctr.opLock. A concurrent CRI
// ListContainers call takes stateLock (now free) and then each container's
// opLock to read its status. The stopper, holding opLock, blocks
// re-acquiring stateLock; the lister, holding stateLock, blocks on opLock.
//
// The fix drops stateLock right after the lookup in StopContainer, so
// opLock is never held while stateLock is requested, and
// waitContainerStopped no longer juggles the caller's lock.
package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
)

const (
	ContainerStateRunning = "running"
	ContainerStateStopped = "stopped"
)

type ContainerState struct {
	Status   string
	Pid      int
	ExitCode int32
	Finished time.Time
}

type Container struct {
	id     string
	name   string
	opLock sync.Mutex
	state  *ContainerState
	exited chan struct{}
}

func (c *Container) State() ContainerState {
	c.opLock.Lock()
	defer c.opLock.Unlock()
	return *c.state
}

type Runtime struct{}

func (r *Runtime) StopContainer(ctx context.Context, c *Container, timeout int64) error {
	go func() {
		time.Sleep(150 * time.Millisecond)
		close(c.exited)
	}()
	return nil
}

type ContainerServer struct {
	stateLock  sync.Mutex
	containers map[string]*Container
	runtime    *Runtime
}

func (s *ContainerServer) StopContainer(ctx context.Context, id string, timeout int64) error {
	s.stateLock.Lock()
	defer s.stateLock.Unlock()
	ctr, ok := s.containers[id]
	if !ok {
		return fmt.Errorf("container %s not found", id)
	}
	ctr.opLock.Lock()
	defer ctr.opLock.Unlock()
	return s.stopLocked(ctx, ctr, timeout)
}

func (s *ContainerServer) stopLocked(ctx context.Context, ctr *Container, timeout int64) error {
	if ctr.state.Status == ContainerStateStopped {
		return nil
	}
	if err := s.runtime.StopContainer(ctx, ctr, timeout); err != nil {
		return fmt.Errorf("failed to stop container %s: %w", ctr.id, err)
	}
	if err := s.waitContainerStopped(ctx, ctr, timeout); err != nil {
		return err
	}
	ctr.state.Status = ContainerStateStopped
	ctr.state.Finished = time.Now()
	return nil
}

// waitContainerStopped releases the server state lock while it polls so
// other CRI calls are not stalled for the whole stop timeout.
func (s *ContainerServer) waitContainerStopped(ctx context.Context, ctr *Container, timeout int64) error {
	s.stateLock.Unlock()
	defer s.stateLock.Lock()
	t := time.NewTimer(time.Duration(timeout) * time.Second)
	defer t.Stop()
	select {
	case <-ctr.exited:
		ctr.state.ExitCode = 137
		return nil
	case <-t.C:
		return fmt.Errorf("timed out waiting for %s to stop", ctr.id)
	}
}

type ContainerInfo struct {
	ID, Name, State string
}

func (s *ContainerServer) ListContainers() []ContainerInfo {
	s.stateLock.Lock()
	defer s.stateLock.Unlock()
	out := make([]ContainerInfo, 0, len(s.containers))
	for _, ctr := range s.containers {
		st := ctr.State()
		out = append(out, ContainerInfo{ID: ctr.id, Name: ctr.name, State: st.Status})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

type criServer struct {
	*ContainerServer
}

func (c *criServer) StopContainer(ctx context.Context, id string, timeout int64) error {
	return c.ContainerServer.StopContainer(ctx, id, timeout)
}

func (c *criServer) ListContainers(ctx context.Context) []ContainerInfo {
	return c.ContainerServer.ListContainers()
}

func newContainer(id, name string, pid int) *Container {
	return &Container{id: id, name: name, exited: make(chan struct{}),
		state: &ContainerState{Status: ContainerStateRunning, Pid: pid}}
}

func main() {
	cs := &ContainerServer{runtime: &Runtime{}, containers: map[string]*Container{}}
	for i, name := range []string{"etcd", "kube-apiserver", "coredns"} {
		c := newContainer(fmt.Sprintf("%02d%s", i, name[:3]), name, 1000+i)
		cs.containers[c.id] = c
	}
	srv := &criServer{cs}
	ctx := context.Background()

	listed := make(chan []ContainerInfo, 1)
	go func() {
		time.Sleep(50 * time.Millisecond)
		listed <- srv.ListContainers(ctx)
	}()
	if err := srv.StopContainer(ctx, "00etc", 10); err != nil {
		fmt.Println("stop:", err)
	}
	for _, info := range <-listed {
		fmt.Printf("%s %-15s %s\n", info.ID, info.Name, info.State)
	}
}
