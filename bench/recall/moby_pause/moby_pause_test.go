// Project: moby/docker (daemon/pause.go, container/state.go).
// Bug (approximate, from memory): container.Container embeds *State, and
// State embeds sync.Mutex, so container.Lock() and State.IsRunning() /
// IsPaused() lock the very same mutex. A daemon code path took
// container.Lock() and then, through a helper, called the self-locking
// accessors (IsRunning/IsPaused/IsRestarting) instead of reading the fields
// directly, self-deadlocking the API call. Several such paths were fixed in
// moby over the years; exact issue number not remembered (approximate). Fix:
// read container.Running / container.Paused under the already-held lock.
package moby_pause

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

// ---- container/state.go ----

type State struct {
	sync.Mutex
	Running    bool
	Paused     bool
	Restarting bool
	Pid        int
}

// IsRunning returns whether the running flag is set. Used by Container to check whether a container is running.
func (s *State) IsRunning() bool {
	s.Lock() // DEADLOCK HERE
	res := s.Running
	s.Unlock()
	return res
}

// IsPaused returns whether the container is paused or not.
func (s *State) IsPaused() bool {
	s.Lock()
	res := s.Paused
	s.Unlock()
	return res
}

// IsRestarting returns whether the container is restarting or not.
func (s *State) IsRestarting() bool {
	s.Lock()
	res := s.Restarting
	s.Unlock()
	return res
}

// ---- container/container.go ----

type Container struct {
	*State
	ID   string
	Name string
}

// ---- libcontainerd client ----

type containerdClient interface {
	Pause(containerID string) error
}

type fakeClient struct{}

func (fakeClient) Pause(string) error { return nil }

// ---- daemon ----

type Daemon struct {
	containers        map[string]*Container
	containerd        containerdClient
	eventsServiceLogs []string
}

type errNotRunning string

func (e errNotRunning) Error() string { return fmt.Sprintf("Container %s is not running", string(e)) }

func (daemon *Daemon) GetContainer(name string) (*Container, error) {
	c, ok := daemon.containers[name]
	if !ok {
		return nil, errors.New("No such container: " + name)
	}
	return c, nil
}

// ContainerPause pauses a container
func (daemon *Daemon) ContainerPause(name string) error {
	ctr, err := daemon.GetContainer(name)
	if err != nil {
		return err
	}
	return daemon.containerPause(ctr)
}

// checkContainerPausable validates the container state for pause.
func (daemon *Daemon) checkContainerPausable(container *Container) error {
	// We cannot Pause the container which is not running
	if !container.IsRunning() {
		return errNotRunning(container.ID)
	}
	// We cannot Pause the container which is already paused
	if container.IsPaused() {
		return fmt.Errorf("container %s is already paused", container.ID)
	}
	// We cannot Pause the container which is restarting
	if container.IsRestarting() {
		return fmt.Errorf("container %s is restarting, wait until the container is running", container.ID)
	}
	return nil
}

// containerPause pauses the container execution without stopping the process.
// The execution can be resumed by calling containerUnpause.
func (daemon *Daemon) containerPause(container *Container) error {
	container.Lock()
	defer container.Unlock()

	if err := daemon.checkContainerPausable(container); err != nil {
		return err
	}

	if err := daemon.containerd.Pause(container.ID); err != nil {
		return fmt.Errorf("Cannot pause container %s: %s", container.ID, err)
	}
	container.Paused = true
	daemon.LogContainerEvent(container, "pause")
	return nil
}

func (daemon *Daemon) LogContainerEvent(container *Container, action string) {
	daemon.eventsServiceLogs = append(daemon.eventsServiceLogs, action+" "+container.ID)
}

func TestContainerPause(t *testing.T) {
	ctr := &Container{State: &State{Running: true, Pid: 4242}, ID: "c0ffee", Name: "/web"}
	d := &Daemon{containers: map[string]*Container{"web": ctr}, containerd: fakeClient{}}

	done := make(chan error)
	go func() {
		done <- d.ContainerPause("web")
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !ctr.IsPaused() {
		t.Fatal("container not paused")
	}
}
