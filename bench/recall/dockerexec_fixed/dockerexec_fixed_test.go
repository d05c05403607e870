// Project: moby/moby (Docker daemon, daemon/exec.go + daemon/monitor.go).
// Bug (approximate, docker 1.1x era): ContainerExecStart held the exec config
// lock (ExecConfig.Lock) while taking the container lock to check the
// container state, whereas the exit handler (handleContainerExit -> resetExecs)
// holds the container lock and locks every ExecConfig of the container:
// an AB-BA inversion between Container.Lock and ExecConfig.Lock.
// Fix: ContainerExecStart releases the ExecConfig lock before locking the container.
package dockerexec_fixed

import (
	"errors"
	"sync"
	"testing"
	"time"
)

type ExecConfig struct {
	sync.Mutex
	ID          string
	ContainerID string
	Running     bool
	ExitCode    *int
}

type ExecStore struct {
	mu   sync.RWMutex
	byID map[string]*ExecConfig
}

func NewExecStore() *ExecStore { return &ExecStore{byID: map[string]*ExecConfig{}} }

func (e *ExecStore) Add(id string, c *ExecConfig) {
	e.mu.Lock()
	e.byID[id] = c
	e.mu.Unlock()
}

func (e *ExecStore) Get(id string) *ExecConfig {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.byID[id]
}

func (e *ExecStore) List() []*ExecConfig {
	e.mu.RLock()
	defer e.mu.RUnlock()
	out := make([]*ExecConfig, 0, len(e.byID))
	for _, c := range e.byID {
		out = append(out, c)
	}
	return out
}

type State struct {
	Running  bool
	Paused   bool
	ExitCode int
}

type Container struct {
	sync.Mutex
	ID string
	State
	ExecCommands *ExecStore
}

func (c *Container) SetStopped(code int) {
	c.Running = false
	c.ExitCode = code
}

type Daemon struct {
	containers   map[string]*Container
	execCommands *ExecStore
}

func (d *Daemon) getExecConfig(name string) (*ExecConfig, error) {
	ec := d.execCommands.Get(name)
	if ec == nil {
		return nil, errors.New("no such exec instance: " + name)
	}
	return ec, nil
}

func (d *Daemon) checkContainerRunning(c *Container) error {
	c.Lock()
	defer c.Unlock()
	if !c.Running {
		return errors.New("container " + c.ID + " is not running")
	}
	if c.Paused {
		return errors.New("container " + c.ID + " is paused")
	}
	return nil
}

// ContainerExecStart starts a previously created exec instance.
func (d *Daemon) ContainerExecStart(name string) error {
	ec, err := d.getExecConfig(name)
	if err != nil {
		return err
	}
	ec.Lock()
	if ec.Running {
		ec.Unlock()
		return errors.New("exec " + ec.ID + " is already running")
	}
	ec.Running = true
	c := d.containers[ec.ContainerID]
	ec.Unlock()                       // FIX: release the exec config before taking the container lock.
	time.Sleep(50 * time.Millisecond) // containerd round trip; widens the window
	if err := d.checkContainerRunning(c); err != nil {
		ec.Lock()
		ec.Running = false
		ec.Unlock()
		return err
	}
	return nil
}

// handleContainerExit is called by the monitor when the container's init exits.
func (d *Daemon) handleContainerExit(c *Container, code int) {
	c.Lock()
	defer c.Unlock()
	c.SetStopped(code)
	time.Sleep(50 * time.Millisecond) // write state to disk
	d.resetExecs(c, code)
}

// resetExecs marks all exec processes of c as exited. Called with c locked.
func (d *Daemon) resetExecs(c *Container, code int) {
	for _, ec := range c.ExecCommands.List() {
		ec.Lock()
		ec.Running = false
		ec.ExitCode = &code
		ec.Unlock()
	}
}

func TestExecStartVsContainerExit(t *testing.T) {
	c := &Container{ID: "c1", State: State{Running: true}, ExecCommands: NewExecStore()}
	d := &Daemon{containers: map[string]*Container{"c1": c}, execCommands: NewExecStore()}
	ec := &ExecConfig{ID: "e1", ContainerID: "c1"}
	d.execCommands.Add(ec.ID, ec)
	c.ExecCommands.Add(ec.ID, ec)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := d.ContainerExecStart("e1"); err != nil {
			t.Logf("exec start: %v", err)
		}
	}()
	go func() {
		defer wg.Done()
		d.handleContainerExit(c, 137)
	}()
	wg.Wait()
}
