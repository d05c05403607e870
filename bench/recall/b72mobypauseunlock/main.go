// Command b72mobypauseunlock models the pause path of the moby daemon
// (daemon/pause.go, container/state.go): Daemon.ContainerPause looks the
// container up in the memory store and flips its State under the container
// lock, and inspect later reads the container under the same lock.
//
// Modelled on moby/docker, no specific upstream bug. Container.setPaused takes
// the container lock and installs a deferred closure over the receiver that
// unlocks only when the method returns an error; the success path unlocks by
// hand so that the event attributes can be read afterwards. The branch for a
// container that is already paused returns a nil error without unlocking, so
// a second "docker pause" of the same container leaves the lock held, and the
// following "docker inspect" blocks forever in Container.Lock.
//
// The fixed twin uses a plain deferred Unlock on every path.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

type State struct {
	sync.Mutex
	Running    bool
	Paused     bool
	Restarting bool
	Pid        int
	StartedAt  time.Time
}

type Config struct {
	Image  string
	Labels map[string]string
}

type Container struct {
	*State
	ID     string
	Name   string
	Config *Config
}

type ContainerJSON struct {
	ID, Name, Status string
	Pid              int
}

func (s *State) StateString() string {
	switch {
	case s.Paused:
		return "paused"
	case s.Restarting:
		return "restarting"
	case s.Running:
		return "running"
	}
	return "exited"
}

func (container *Container) pausable() error {
	if !container.Running {
		return fmt.Errorf("container %s is not running", container.ID)
	}
	if container.Restarting {
		return fmt.Errorf("container %s is restarting, wait until the container is running", container.ID)
	}
	return nil
}

func (container *Container) setPaused(pause func(ctx context.Context, id string) error) (changed bool, err error) {
	container.Lock()
	defer func() {
		if err != nil {
			container.Unlock()
		}
	}()
	if err := container.pausable(); err != nil {
		return false, err
	}
	if container.Paused {
		return false, nil
	}
	if err := pause(context.Background(), container.ID); err != nil {
		return false, fmt.Errorf("cannot pause container %s: %w", container.ID, err)
	}
	container.Paused = true
	container.Unlock()
	return true, nil
}

func (container *Container) eventAttributes() map[string]string {
	container.Lock()
	defer container.Unlock()
	attrs := map[string]string{"name": container.Name, "image": container.Config.Image}
	for k, v := range container.Config.Labels {
		attrs[k] = v
	}
	return attrs
}

type memoryStore struct {
	sync.RWMutex
	s map[string]*Container
}

func (m *memoryStore) Get(id string) *Container {
	m.RLock()
	defer m.RUnlock()
	return m.s[id]
}

type containerdClient struct {
	paused map[string]bool
}

func (c *containerdClient) Pause(ctx context.Context, id string) error {
	c.paused[id] = true
	return nil
}

type Daemon struct {
	containers *memoryStore
	containerd *containerdClient
	eventsMu   sync.Mutex
	events     []string
}

func (daemon *Daemon) GetContainer(name string) (*Container, error) {
	if ctr := daemon.containers.Get(name); ctr != nil {
		return ctr, nil
	}
	return nil, errors.New("No such container: " + name)
}

func (daemon *Daemon) LogContainerEvent(container *Container, action string) {
	attrs := container.eventAttributes()
	daemon.eventsMu.Lock()
	daemon.events = append(daemon.events, fmt.Sprintf("container %s %s %v", action, container.ID, attrs["name"]))
	daemon.eventsMu.Unlock()
}

func (daemon *Daemon) ContainerPause(name string) error {
	ctr, err := daemon.GetContainer(name)
	if err != nil {
		return err
	}
	changed, err := ctr.setPaused(daemon.containerd.Pause)
	if err != nil {
		return err
	}
	if changed {
		daemon.LogContainerEvent(ctr, "pause")
	}
	return nil
}

func (daemon *Daemon) ContainerInspect(name string) (*ContainerJSON, error) {
	ctr, err := daemon.GetContainer(name)
	if err != nil {
		return nil, err
	}
	ctr.Lock()
	defer ctr.Unlock()
	return &ContainerJSON{ID: ctr.ID, Name: ctr.Name, Status: ctr.StateString(), Pid: ctr.Pid}, nil
}

func main() {
	ctr := &Container{
		State:  &State{Running: true, Pid: 4242, StartedAt: time.Now()},
		ID:     "3f1c9a",
		Name:   "/web",
		Config: &Config{Image: "nginx:1.27", Labels: map[string]string{"com.docker.compose.service": "web"}},
	}
	daemon := &Daemon{
		containers: &memoryStore{s: map[string]*Container{"3f1c9a": ctr}},
		containerd: &containerdClient{paused: map[string]bool{}},
	}

	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 2; i++ {
			if err := daemon.ContainerPause("3f1c9a"); err != nil {
				fmt.Println("pause:", err)
			}
		}
	}()
	<-done

	info, err := daemon.ContainerInspect("3f1c9a")
	if err != nil {
		fmt.Println("inspect:", err)
		return
	}
	fmt.Printf("%s %s pid=%d events=%d\n", info.Name, info.Status, info.Pid, len(daemon.events))
}
