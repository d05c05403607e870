// FIXED twin. Project: containers/podman (libpod) — libpod/runtime_ctr.go
// Issue: containers/podman#1245; fix PR containers/podman#1251
// ("removeContainer: fix deadlock").
//
// Runtime.RemoveContainer takes the runtime-wide r.lock (sync.RWMutex) for
// writing and calls the internal r.removeContainer. To check whether the
// container had already been removed, removeContainer called the public
// Runtime API r.HasContainer(), which itself takes r.lock.RLock(). The
// RLock can never be granted while the same goroutine holds the write lock,
// so every `podman rm` hangs. The deadlocking acquisition is the RLock in
// HasContainer (line 60), reached from removeContainer (line 85).
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

var ErrRuntimeStopped = errors.New("runtime has already been stopped")

// State is libpod's database-backed state (BoltState / InMemoryState).
type State interface {
	HasContainer(id string) (bool, error)
	RemoveContainer(ctr *Container) error
}

type inMemoryState struct {
	containers map[string]*Container
}

func (s *inMemoryState) HasContainer(id string) (bool, error) {
	_, ok := s.containers[id]
	return ok, nil
}

func (s *inMemoryState) RemoveContainer(ctr *Container) error {
	delete(s.containers, ctr.ID())
	return nil
}

type Container struct {
	id      string
	lock    sync.Mutex
	runtime *Runtime
	valid   bool
}

func (c *Container) ID() string { return c.id }

type Runtime struct {
	state State
	lock  sync.RWMutex
	valid bool
}

// HasContainer checks if a container with the given ID is present
func (r *Runtime) HasContainer(id string) (bool, error) {
	r.lock.RLock()
	defer r.lock.RUnlock()
	if !r.valid {
		return false, ErrRuntimeStopped
	}
	return r.state.HasContainer(id)
}

// RemoveContainer removes the given container
func (r *Runtime) RemoveContainer(ctx context.Context, c *Container, force bool) error {
	r.lock.Lock()
	defer r.lock.Unlock()
	return r.removeContainer(ctx, c, force)
}

// Internal function to remove a container
// Locks the container, but does not lock the runtime
func (r *Runtime) removeContainer(ctx context.Context, c *Container, force bool) error {
	if !r.valid {
		return ErrRuntimeStopped
	}
	c.lock.Lock()
	defer c.lock.Unlock()

	// Check that the container has not already been removed
	if ok, _ := c.runtime.state.HasContainer(c.ID()); !ok { // FIX: use state directly, r.lock already held
		// container probably already removed
		return nil
	}

	if err := r.state.RemoveContainer(c); err != nil {
		return fmt.Errorf("error removing container %s from database: %w", c.ID(), err)
	}
	c.valid = false
	return nil
}

func main() {
	r := &Runtime{valid: true}
	st := &inMemoryState{containers: map[string]*Container{}}
	r.state = st
	c := &Container{id: "3f2c1a", runtime: r, valid: true}
	st.containers[c.id] = c

	if err := r.RemoveContainer(context.Background(), c, true); err != nil {
		fmt.Println("error:", err)
	}
	fmt.Println("removed", c.ID())
}
