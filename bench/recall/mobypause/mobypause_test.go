// Project: moby/docker (daemon/pause.go, container/state.go).
//
// Bug (approximate): Daemon.containerPause locks the container and unlocks it by
// hand on every return path; the "container is restarting" early return forgot
// container.Unlock(). The pause API call returns an error, but the container lock
// is leaked, so the restart manager (handling the container's exit) and every
// later `docker inspect` / `docker ps` block forever on container.Lock().
// Fix: container.Lock(); defer container.Unlock() (which is what moby does today).
package mobypause

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// State mirrors container.State: it embeds the container's mutex.
type State struct {
	sync.Mutex
	Running    bool
	Paused     bool
	Restarting bool
	ExitCode   int
	StartedAt  time.Time
}

type Container struct {
	*State
	ID   string
	Name string
}

func (s *State) IsRunning() bool {
	s.Lock()
	defer s.Unlock()
	return s.Running
}

// containerdClient is libcontainerd's client interface.
type containerdClient interface {
	Pause(ctx context.Context, containerID string) error
}

type fakeContainerd struct{}

func (fakeContainerd) Pause(context.Context, string) error { return nil }

type Daemon struct {
	containers sync.Map // name -> *Container
	containerd containerdClient
	events     chan string
}

func (daemon *Daemon) GetContainer(name string) (*Container, error) {
	v, ok := daemon.containers.Load(name)
	if !ok {
		return nil, fmt.Errorf("No such container: %s", name)
	}
	return v.(*Container), nil
}

func errNotRunning(id string) error { return fmt.Errorf("container %s is not running", id) }

func errContainerIsRestarting(id string) error {
	return fmt.Errorf("container %s is restarting, wait until the container is running", id)
}

var errAlreadyPaused = errors.New("container is already paused")

// ContainerPause is the API backend for POST /containers/{name}/pause.
func (daemon *Daemon) ContainerPause(name string) error {
	ctr, err := daemon.GetContainer(name)
	if err != nil {
		return err
	}
	return daemon.containerPause(ctr)
}

func (daemon *Daemon) containerPause(container *Container) error {
	container.Lock()

	if !container.Running {
		container.Unlock()
		return errNotRunning(container.ID)
	}
	if container.Paused {
		container.Unlock()
		return errAlreadyPaused
	}
	if container.Restarting {
		return errContainerIsRestarting(container.ID) // lock leaked here
	}
	if err := daemon.containerd.Pause(context.Background(), container.ID); err != nil {
		container.Unlock()
		return fmt.Errorf("cannot pause container %s: %w", container.ID, err)
	}
	container.Paused = true
	daemon.LogContainerEvent(container, "pause")
	container.Unlock()
	return nil
}

func (daemon *Daemon) LogContainerEvent(c *Container, action string) {
	select {
	case daemon.events <- c.ID + " " + action:
	default:
	}
}

// handleContainerRestarted is what the restart manager runs once the
// container's process has been started again.
func (daemon *Daemon) handleContainerRestarted(c *Container) {
	c.Lock() // DEADLOCK HERE (lock leaked by containerPause)
	defer c.Unlock()
	c.Restarting = false
	c.Running = true
	c.StartedAt = time.Now()
	daemon.LogContainerEvent(c, "start")
}

func TestPauseWhileRestarting(t *testing.T) {
	daemon := &Daemon{containerd: fakeContainerd{}, events: make(chan string, 16)}
	ctr := &Container{State: &State{Running: true, Restarting: true}, ID: "4f2a9c", Name: "web"}
	daemon.containers.Store("web", ctr)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // API: docker pause web
		defer wg.Done()
		if err := daemon.ContainerPause("web"); err != nil {
			t.Logf("pause: %v", err)
		}
	}()
	time.AfterFunc(10*time.Millisecond, func() { // restart manager
		defer wg.Done()
		daemon.handleContainerRestarted(ctr)
	})
	wg.Wait()

	if !ctr.IsRunning() {
		t.Fatal("container should be running")
	}
}
