// moby/moby #12606, fixed by #12799 ("Prevent deadlock on --net=container:<self>").
//
// Container.Start locks the container (State is embedded, so the container
// lock *is* the state lock since #7775) and goes on to set up networking.
// For --net=container:<id> it looks the other container up through the
// daemon and asks whether it is running. When <id> is the container itself,
// the lookup hands back the very object whose lock Start already holds, and
// IsRunning locks it again.
package main

import (
	"fmt"
	"strings"
	"sync"
)

// State is embedded in Container; its mutex is the container lock.
type State struct {
	sync.Mutex
	Running bool
	Pid     int
}

// IsRunning returns whether the running flag is set.
func (s *State) IsRunning() bool {
	s.Lock()
	res := s.Running
	s.Unlock()
	return res
}

// setRunning must be called with the lock held.
func (s *State) setRunning(pid int) {
	s.Running = true
	s.Pid = pid
}

type HostConfig struct {
	NetworkMode string
}

type Container struct {
	*State
	ID         string
	Name       string
	HostsPath  string
	HostConfig *HostConfig
	daemon     *Daemon
}

type contStore struct {
	mu sync.RWMutex
	s  map[string]*Container
}

func (c *contStore) Add(id string, cont *Container) {
	c.mu.Lock()
	c.s[id] = cont
	c.mu.Unlock()
}

func (c *contStore) Get(id string) *Container {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.s[id]
}

type Daemon struct {
	containers *contStore
	nextPid    int
}

// Get looks a container up by full id or by name.
func (daemon *Daemon) Get(prefixOrName string) (*Container, error) {
	if c := daemon.containers.Get(prefixOrName); c != nil {
		return c, nil
	}
	daemon.containers.mu.RLock()
	defer daemon.containers.mu.RUnlock()
	for _, c := range daemon.containers.s {
		if c.Name == prefixOrName {
			return c, nil
		}
	}
	return nil, fmt.Errorf("no such id: %s", prefixOrName)
}

func (container *Container) getNetworkedContainer() (*Container, error) {
	parts := strings.SplitN(container.HostConfig.NetworkMode, ":", 2)
	switch parts[0] {
	case "container":
		if len(parts) != 2 {
			return nil, fmt.Errorf("no container specified to join network")
		}
		nc, err := container.daemon.Get(parts[1])
		if err != nil {
			return nil, err
		}
		if !nc.IsRunning() {
			return nil, fmt.Errorf("cannot join network of a non running container: %s", parts[1])
		}
		return nc, nil
	default:
		return nil, fmt.Errorf("network mode not set to container")
	}
}

func (container *Container) initializeNetworking() error {
	if strings.HasPrefix(container.HostConfig.NetworkMode, "container:") {
		nc, err := container.getNetworkedContainer()
		if err != nil {
			return err
		}
		container.HostsPath = nc.HostsPath
		return nil
	}
	container.HostsPath = "/var/lib/docker/containers/" + container.ID + "/hosts"
	return nil
}

// Start runs the container; it holds the container lock throughout.
func (container *Container) Start() (err error) {
	container.Lock()
	defer container.Unlock()
	if container.Running {
		return nil
	}
	if err := container.initializeNetworking(); err != nil {
		return err
	}
	container.daemon.nextPid++
	container.setRunning(container.daemon.nextPid)
	return nil
}

func (daemon *Daemon) create(id, name, netMode string) *Container {
	c := &Container{State: &State{}, ID: id, Name: name, HostConfig: &HostConfig{NetworkMode: netMode}, daemon: daemon}
	daemon.containers.Add(id, c)
	return c
}

func main() {
	d := &Daemon{containers: &contStore{s: map[string]*Container{}}, nextPid: 100}
	web := d.create("4f1c2a", "web", "bridge")
	side := d.create("9a8b7c", "sidecar", "container:web")
	self := d.create("d00d5e", "loop", "container:d00d5e")

	for _, c := range []*Container{web, side, self} {
		if err := c.Start(); err != nil {
			fmt.Printf("start %s: %v\n", c.Name, err)
			continue
		}
		fmt.Printf("started %s (hosts %s)\n", c.Name, c.HostsPath)
	}
}
