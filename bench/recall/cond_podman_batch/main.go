// Pattern: podman libpod Container.Batch (libpod/container_api.go).
// Every public accessor starts with
//
//	if !c.batched { c.lock.Lock(); defer c.lock.Unlock(); c.syncContainer() }
//
// Batch takes the lock once and hands the callback a *copy* of the container
// that shares the lock and state but has batched=true, so accessors called on
// the copy skip locking. The original (shared) struct never has batched set.
package main

import (
	"errors"
	"fmt"
	"sync"
)

type ContainerStatus int

const (
	StateConfigured ContainerStatus = iota
	StateRunning
	StateStopped
)

type ContainerState struct {
	State    ContainerStatus
	PID      int
	ExitCode int
}

type Container struct {
	id      string
	lock    *sync.Mutex // podman: lock.Locker shared by pointer
	state   *ContainerState
	valid   bool
	batched bool
}

// syncContainer must be called with the container lock held.
func (c *Container) syncContainer() error {
	if !c.valid {
		return errors.New("container removed")
	}
	return nil
}

func (c *Container) State() (ContainerStatus, error) {
	if !c.batched {
		c.lock.Lock()
		defer c.lock.Unlock()
		if err := c.syncContainer(); err != nil {
			return 0, err
		}
	}
	return c.state.State, nil
}

func (c *Container) PID() (int, error) {
	if !c.batched {
		c.lock.Lock()
		defer c.lock.Unlock()
		if err := c.syncContainer(); err != nil {
			return 0, err
		}
	}
	return c.state.PID, nil
}

func (c *Container) Start() error {
	if !c.batched {
		c.lock.Lock()
		defer c.lock.Unlock()
		if err := c.syncContainer(); err != nil {
			return err
		}
	}
	if c.state.State == StateRunning {
		return fmt.Errorf("container %s already running", c.id)
	}
	c.state.State = StateRunning
	c.state.PID = 4000 + len(c.id)
	return nil
}

// Batch runs batchFunc on a batched copy while holding the container lock.
func (c *Container) Batch(batchFunc func(*Container) error) error {
	c.lock.Lock()
	defer c.lock.Unlock()

	newCtr := new(Container)
	newCtr.id = c.id
	newCtr.lock = c.lock
	newCtr.state = c.state
	newCtr.valid = true
	newCtr.batched = true

	if err := c.syncContainer(); err != nil {
		return err
	}
	return batchFunc(newCtr)
}

func main() {
	ctr := &Container{id: "abc123", lock: new(sync.Mutex), state: &ContainerState{}, valid: true}

	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if i%2 == 0 {
				_ = ctr.Start() // non-batched path: takes the lock itself
				_, _ = ctr.State()
				return
			}
			err := ctr.Batch(func(c *Container) error {
				st, err := c.State() // batched copy: no second Lock
				if err != nil {
					return err
				}
				if st != StateRunning {
					if err := c.Start(); err != nil {
						return err
					}
				}
				pid, err := c.PID()
				if err != nil {
					return err
				}
				_ = pid
				return nil
			})
			if err != nil {
				fmt.Println("batch:", err)
			}
		}(i)
	}
	wg.Wait()
	pid, _ := ctr.PID()
	fmt.Println("final pid", pid)
}
