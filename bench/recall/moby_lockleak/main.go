// Modeled on moby/moby daemon start path (daemon/start.go containerStart):
// container.Lock() was taken and an early error return ("container is marked
// for removal and cannot be started") left the container locked; the next
// operation on the container (docker inspect / stop) hung on
// container.Lock(). Fixed by registering the deferred Unlock right after
// taking the lock.
package main

import (
	"errors"
	"fmt"
	"sync"
)

type State struct {
	sync.Mutex
	Running           bool
	RemovalInProgress bool
	Dead              bool
}

type Container struct {
	ID    string
	State *State
}

type Daemon struct {
	containers map[string]*Container
}

func (daemon *Daemon) containerStart(c *Container) error {
	c.State.Lock()
	if c.State.Running {
		c.State.Unlock()
		return nil
	}
	if c.State.RemovalInProgress || c.State.Dead {
		return errors.New("container is marked for removal and cannot be started")
	}
	c.State.Running = true
	c.State.Unlock()
	return nil
}

func (daemon *Daemon) setRemovalInProgress(c *Container) {
	c.State.Lock()
	defer c.State.Unlock()
	c.State.RemovalInProgress = true
}

func (daemon *Daemon) ContainerInspect(id string) (bool, error) {
	c, ok := daemon.containers[id]
	if !ok {
		return false, fmt.Errorf("no such container: %s", id)
	}
	c.State.Lock()
	defer c.State.Unlock()
	return c.State.Running, nil
}

func main() {
	c := &Container{ID: "abc123", State: &State{}}
	daemon := &Daemon{containers: map[string]*Container{c.ID: c}}

	done := make(chan struct{})
	go func() { // docker rm -f racing with docker start
		daemon.setRemovalInProgress(c)
		close(done)
	}()
	<-done
	if err := daemon.containerStart(c); err != nil {
		fmt.Println("start:", err)
	}
	running, err := daemon.ContainerInspect(c.ID)
	fmt.Println(running, err)
}
