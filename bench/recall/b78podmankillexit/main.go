// Project: containers/podman (libpod/container_api.go Kill, libpod/oci_conmon_linux.go KillContainer and
// UpdateContainerStatus, libpod/container_internal.go cleanup), v4.2.0, August 2022 (issue #15492, PR #15494).
// Bug: Container.Kill holds the container lock while the OCI runtime kills the container; when the kill
// fails because the container just exited, UpdateContainerStatus marks it stopped and then waited for the
// exit code to appear in the database, but the exit code is written by the cleanup process, which first
// takes the same container lock, so podman kill hangs forever (fix: do not wait for the exit code there).
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ---- define ----

type ContainerStatus int

const (
	ContainerStateRunning ContainerStatus = iota
	ContainerStateStopped
	ContainerStateExited
)

var (
	ErrNoSuchExitCode  = errors.New("no such exit code")
	ErrCtrStateInvalid = errors.New("container state improper")
)

// ---- libpod/lock: in-memory lock manager ----

type Locker interface {
	ID() uint32
	Lock()
	Unlock()
}

type Mutex struct {
	id        uint32
	lock      sync.Mutex
	allocated bool
}

func (m *Mutex) ID() uint32 { return m.id }
func (m *Mutex) Lock()      { m.lock.Lock() }
func (m *Mutex) Unlock()    { m.lock.Unlock() }

// ---- libpod state (database) ----

type InMemoryState struct {
	lock      sync.Mutex
	exitCodes map[string]int32
}

func (s *InMemoryState) AddContainerExitCode(id string, code int32) error {
	s.lock.Lock()
	defer s.lock.Unlock()
	s.exitCodes[id] = code
	return nil
}

func (s *InMemoryState) GetContainerExitCode(id string) (int32, error) {
	s.lock.Lock()
	defer s.lock.Unlock()
	code, ok := s.exitCodes[id]
	if !ok {
		return -1, ErrNoSuchExitCode
	}
	return code, nil
}

// ---- libpod container ----

type ContainerState struct {
	State    ContainerStatus
	ExitCode int32
}

type Runtime struct{ state *InMemoryState }

type Container struct {
	id         string
	state      *ContainerState
	lock       Locker
	runtime    *Runtime
	ociRuntime *ConmonOCIRuntime
	batched    bool
}

func (c *Container) ID() string           { return c.id }
func (c *Container) syncContainer() error { return nil }

// Kill sends a signal to a container.
func (c *Container) Kill(signal uint) error {
	if !c.batched {
		c.lock.Lock()
		defer c.lock.Unlock()
		if err := c.syncContainer(); err != nil {
			return err
		}
	}
	if c.state.State != ContainerStateRunning {
		return fmt.Errorf("can only kill running containers. %s is in state %d: %w", c.ID(), c.state.State, ErrCtrStateInvalid)
	}
	return c.ociRuntime.KillContainer(c, signal, false)
}

// cleanup is what `podman container cleanup` (started by conmon's exit command) runs.
func (c *Container) Cleanup(exitCode int32) error {
	c.lock.Lock()
	defer c.lock.Unlock()
	if err := c.syncContainer(); err != nil {
		return err
	}
	c.state.State = ContainerStateExited
	return c.runtime.state.AddContainerExitCode(c.ID(), exitCode)
}

// ---- libpod/oci_conmon ----

type conmon struct {
	exited   bool
	exitFile int32
	onExit   func(exitCode int32)
}

type ConmonOCIRuntime struct {
	conmons map[string]*conmon
}

// KillContainer sends the given signal to the given container.
func (r *ConmonOCIRuntime) KillContainer(ctr *Container, signal uint, all bool) error {
	if err := r.runtimeKill(ctr.ID(), signal); err != nil {
		// Update container state - there's a chance we failed because
		// the container exited in the meantime.
		if err2 := r.UpdateContainerStatus(ctr); err2 != nil {
			fmt.Println("error updating status for container", ctr.ID(), err2)
		}
		if ctr.state.State == ContainerStateExited || ctr.state.State == ContainerStateStopped {
			return fmt.Errorf("%w: container %s has already been stopped", ErrCtrStateInvalid, ctr.ID())
		}
		return fmt.Errorf("sending signal to container %s: %w", ctr.ID(), err)
	}
	return nil
}

// runtimeKill is `crun kill <id> <signal>`; the container process is already gone.
func (r *ConmonOCIRuntime) runtimeKill(id string, signal uint) error {
	cm := r.conmons[id]
	if !cm.exited {
		cm.exited, cm.exitFile = true, 137
		go cm.onExit(cm.exitFile) // conmon writes the exit file and runs the exit command
	}
	return errors.New("kill container: No such process")
}

// UpdateContainerStatus retrieves the current status of the container from the runtime.
func (r *ConmonOCIRuntime) UpdateContainerStatus(ctr *Container) error {
	if cm := r.conmons[ctr.ID()]; cm.exited {
		ctr.state.State = ContainerStateStopped
		// Wait for the exit code to show up in the database (it is
		// written by the cleanup process).
		for {
			code, err := ctr.runtime.state.GetContainerExitCode(ctr.ID())
			if err == nil {
				ctr.state.ExitCode = code
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return nil
}

func main() {
	rt := &Runtime{state: &InMemoryState{exitCodes: map[string]int32{}}}
	oci := &ConmonOCIRuntime{conmons: map[string]*conmon{}}
	ctr := &Container{id: "3f2a9c", state: &ContainerState{State: ContainerStateRunning},
		lock: &Mutex{id: 7, allocated: true}, runtime: rt, ociRuntime: oci}

	cleanedUp := make(chan error, 1)
	oci.conmons[ctr.ID()] = &conmon{onExit: func(code int32) { cleanedUp <- ctr.Cleanup(code) }}

	fmt.Println("podman kill:", ctr.Kill(9))
	fmt.Println("podman container cleanup:", <-cleanedUp)
	code, err := rt.state.GetContainerExitCode(ctr.ID())
	fmt.Println("exit code", code, err)
}
