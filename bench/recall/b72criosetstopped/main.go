// Command b72criosetstopped models cri-o's container state handling
// (internal/oci/container.go, internal/oci/runtime_oci.go and the exit
// monitor in server/server.go): the per-container opLock, the runtime's
// UpdateContainerStatus, StopContainer and the CRI ContainerStatus call.
//
// Modelled on cri-o, no specific upstream bug. Container.setStopped records
// the exit code and takes a locked flag telling it whether the caller already
// holds opLock. StopContainer passes true. The exit-file path reached from
// UpdateContainerStatus, which takes opLock itself, goes through
// updateContainerStatus, handleExit and readExitFile and calls setStopped
// with false, so the exit monitor goroutine blocks on the opLock it holds.
// The kubelet's next ContainerStatus then blocks in State on the same lock.
//
// The fixed twin passes true from readExitFile.
package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"
)

const (
	ContainerStateCreated = "created"
	ContainerStateRunning = "running"
	ContainerStateStopped = "stopped"
)

type ContainerState struct {
	Status    string
	Started   time.Time
	Finished  time.Time
	ExitCode  *int32
	OOMKilled bool
}

type Container struct {
	id       string
	name     string
	opLock   sync.RWMutex
	state    *ContainerState
	exitFile string
}

func (c *Container) ID() string { return c.id }

func (c *Container) State() *ContainerState {
	c.opLock.RLock()
	defer c.opLock.RUnlock()
	cp := *c.state
	return &cp
}

func (c *Container) setStopped(exitCode int32, oom bool, locked bool) {
	if !locked {
		c.opLock.Lock()
		defer c.opLock.Unlock()
	}
	c.state.Status = ContainerStateStopped
	c.state.Finished = time.Now()
	c.state.ExitCode = &exitCode
	c.state.OOMKilled = oom
}

type fakeFS struct {
	mu    sync.Mutex
	files map[string]string
}

func (f *fakeFS) ReadFile(name string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.files[name]
	return v, ok
}

type runtimeOCI struct {
	fs *fakeFS
}

func (r *runtimeOCI) StopContainer(ctx context.Context, c *Container, timeout int64) error {
	c.opLock.Lock()
	defer c.opLock.Unlock()
	if c.state.Status == ContainerStateStopped {
		return nil
	}
	c.setStopped(137, false, true)
	return nil
}

func (r *runtimeOCI) UpdateContainerStatus(ctx context.Context, c *Container) error {
	c.opLock.Lock()
	defer c.opLock.Unlock()
	return r.updateContainerStatus(ctx, c)
}

func (r *runtimeOCI) updateContainerStatus(ctx context.Context, c *Container) error {
	if c.state.Status == ContainerStateStopped {
		return nil
	}
	if _, exited := r.fs.ReadFile(c.exitFile); !exited {
		c.state.Status = ContainerStateRunning
		return nil
	}
	return r.handleExit(ctx, c)
}

func (r *runtimeOCI) handleExit(ctx context.Context, c *Container) error {
	code, err := r.readExitFile(c)
	if err != nil {
		return fmt.Errorf("failed to read exit file for %s: %w", c.ID(), err)
	}
	fmt.Printf("container %s exited with code %d\n", c.name, code)
	return nil
}

func (r *runtimeOCI) readExitFile(c *Container) (int32, error) {
	data, _ := r.fs.ReadFile(c.exitFile)
	code, err := strconv.Atoi(data)
	if err != nil {
		return 0, err
	}
	_, oom := r.fs.ReadFile(c.exitFile + ".oom")
	c.setStopped(int32(code), oom, false)
	return int32(code), nil
}

type Server struct {
	runtime    *runtimeOCI
	mu         sync.RWMutex
	containers map[string]*Container
}

func (s *Server) GetContainer(id string) *Container {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.containers[id]
}

func (s *Server) monitorExits(exits <-chan string, done chan<- struct{}) {
	defer close(done)
	for id := range exits {
		if c := s.GetContainer(id); c != nil {
			if err := s.runtime.UpdateContainerStatus(context.Background(), c); err != nil {
				fmt.Println("update status:", err)
			}
		}
	}
}

func (s *Server) ContainerStatus(ctx context.Context, id string) (string, error) {
	c := s.GetContainer(id)
	if c == nil {
		return "", fmt.Errorf("could not find container %q", id)
	}
	st := c.State()
	if st.ExitCode != nil {
		return fmt.Sprintf("%s (exit %d, oom=%v)", st.Status, *st.ExitCode, st.OOMKilled), nil
	}
	return st.Status, nil
}

func main() {
	fs := &fakeFS{files: map[string]string{}}
	s := &Server{runtime: &runtimeOCI{fs: fs}, containers: map[string]*Container{}}
	for _, id := range []string{"a1b2", "c3d4"} {
		s.containers[id] = &Container{id: id, name: "app-" + id, exitFile: "/var/run/crio/exits/" + id, state: &ContainerState{Status: ContainerStateRunning, Started: time.Now()}}
	}

	if err := s.runtime.StopContainer(context.Background(), s.containers["c3d4"], 10); err != nil {
		fmt.Println("stop:", err)
	}

	exits := make(chan string, 1)
	monitorDone := make(chan struct{})
	go s.monitorExits(exits, monitorDone)

	fs.mu.Lock()
	fs.files["/var/run/crio/exits/a1b2"] = "1"
	fs.mu.Unlock()
	exits <- "a1b2"
	close(exits)
	time.Sleep(50 * time.Millisecond)

	for _, id := range []string{"c3d4", "a1b2"} {
		status, err := s.ContainerStatus(context.Background(), id)
		fmt.Println(id, status, err)
	}
	<-monitorDone
}
