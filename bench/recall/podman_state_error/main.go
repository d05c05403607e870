// Project: podman (libpod/container_api.go, libpod/container_internal.go, libpod/define/errors.go)
// Bug: libpod container locks are not re-entrant; public accessors such as State() lock
// c.lock unless c.batched is set. An invalid-state error type built inside a locked
// operation (Stop) carried the *Container and rendered the state lazily in Error(). The
// error was logged via fmt/logrus while c.lock was still held, so the implicit Error() call
// re-entered State() and self-deadlocked on c.lock.
// Upstream fix: capture the state value when constructing the error (under the lock) and
// use the lock-free c.state.State in internal paths. Specific PR not recalled; shape
// modelled from podman's batched/unbatched locking convention.
package main

import (
	"errors"
	"fmt"
	"log"
	"sync"
	"time"
)

type ContainerStatus int

const (
	ContainerStateCreated ContainerStatus = iota
	ContainerStateRunning
	ContainerStateStopped
)

func (s ContainerStatus) String() string {
	return [...]string{"created", "running", "stopped"}[s]
}

var ErrCtrStateInvalid = errors.New("container state improper")

type containerState struct {
	State    ContainerStatus
	StopTime time.Time
}

type Container struct {
	id      string
	lock    sync.Mutex // stands in for the SHM lock; not re-entrant
	batched bool
	state   *containerState
}

// ctrStateError reports a container in an unexpected state.
type ctrStateError struct {
	ctr *Container
	op  string
}

func (e *ctrStateError) Error() string {
	st, err := e.ctr.State()
	if err != nil {
		return fmt.Sprintf("cannot %s container %s: %v", e.op, e.ctr.ID(), err)
	}
	return fmt.Sprintf("cannot %s container %s in state %s: %v", e.op, e.ctr.ID(), st, ErrCtrStateInvalid)
}

func (e *ctrStateError) Unwrap() error { return ErrCtrStateInvalid }

func (c *Container) ID() string { return c.id }

// State returns the current state of the container.
func (c *Container) State() (ContainerStatus, error) {
	if !c.batched {
		c.lock.Lock() // DEADLOCK HERE
		defer c.lock.Unlock()
		if err := c.syncContainer(); err != nil {
			return ContainerStateCreated, err
		}
	}
	return c.state.State, nil
}

func (c *Container) syncContainer() error { return nil } // reads state from the DB

func (c *Container) stop(timeout uint) error {
	time.Sleep(time.Duration(timeout) * time.Millisecond)
	c.state.State = ContainerStateStopped
	c.state.StopTime = time.Now()
	return nil
}

// Stop stops a running container.
func (c *Container) Stop(timeout uint) error {
	if !c.batched {
		c.lock.Lock()
		defer c.lock.Unlock()
		if err := c.syncContainer(); err != nil {
			return err
		}
	}
	if c.state.State != ContainerStateRunning {
		err := &ctrStateError{ctr: c, op: "stop"}
		log.Printf("stop request rejected: %v", err) // implicit Error() under c.lock
		return err
	}
	return c.stop(timeout)
}

func main() {
	ctrs := []*Container{
		{id: "3f1c9a", state: &containerState{State: ContainerStateRunning}},
		{id: "b77e02", state: &containerState{State: ContainerStateCreated}},
	}
	for _, c := range ctrs {
		if err := c.Stop(10); err != nil {
			if errors.Is(err, ErrCtrStateInvalid) {
				fmt.Println("skipping", c.ID())
				continue
			}
			fmt.Println("error:", err)
		}
	}
	fmt.Println("all stopped")
}
