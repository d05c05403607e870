// Pattern: podman libpod state errors such as
//
//	fmt.Errorf("container %s is %s: %w", c.ID(), c.state.State, define.ErrCtrStateInvalid)
//
// rendered by a typed error that carries the container. The error records
// whether it was built while the container lock was held (locked=true, then
// it snapshots the state) and its Error() method only locks
// `if !e.locked`. Errors built inside the locked method are wrapped with
// fmt.Errorf("%w"), which calls Error() immediately -> no re-lock.
package main

import (
	"errors"
	"fmt"
	"sync"
)

type Container struct {
	mu    sync.Mutex
	id    string
	state string
}

type StateError struct {
	ctr      *Container
	locked   bool   // created with ctr.mu held
	snapshot string // valid when locked
	want     string
}

func newStateError(c *Container, want string, locked bool) *StateError {
	e := &StateError{ctr: c, want: want, locked: locked}
	if locked {
		e.snapshot = c.state
	}
	return e
}

func (e *StateError) Error() string {
	state := e.snapshot
	if !e.locked {
		e.ctr.mu.Lock()
		defer e.ctr.mu.Unlock()
		state = e.ctr.state
	}
	return fmt.Sprintf("container %s is %s, want %s", e.ctr.id, state, e.want)
}

func (c *Container) Start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != "created" && c.state != "stopped" {
		// Error() runs now, inside Errorf, while c.mu is held: locked=true.
		return fmt.Errorf("start: %w", newStateError(c, "created|stopped", true))
	}
	c.state = "running"
	return nil
}

func (c *Container) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != "running" {
		return fmt.Errorf("stop: %w", newStateError(c, "running", true))
	}
	c.state = "stopped"
	return nil
}

// CheckRunning is called without the lock; its error renders lazily.
func (c *Container) CheckRunning() error {
	c.mu.Lock()
	ok := c.state == "running"
	c.mu.Unlock()
	if ok {
		return nil
	}
	return newStateError(c, "running", false)
}

func main() {
	c := &Container{id: "f00d", state: "created"}
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[string]int{}
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var err error
			switch i % 3 {
			case 0:
				err = c.Start()
			case 1:
				err = c.Stop()
			case 2:
				err = c.CheckRunning()
				if err != nil {
					_ = err.Error() // locks c.mu; nothing held here
				}
			}
			var se *StateError
			mu.Lock()
			counts[fmt.Sprint(errors.As(err, &se))]++
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	fmt.Println(counts)
}
