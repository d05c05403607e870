// Shape of docker (moby) commit 0d9e5436 (April 2013, "Fix deadlock on stop
// failure").
//
// Container.Stop locks the container State, sends SIGTERM and waits. When
// the process ignores SIGTERM and the wait times out, Stop falls back to the
// exported Container.Kill, which locks the same State again. The fix calls
// the unexported container.kill, which expects the lock to be held.
package main

import (
	"errors"
	"fmt"
	"log"
	"sync"
	"time"
)

type State struct {
	l        sync.Mutex
	Running  bool
	Pid      int
	ExitCode int
}

func (s *State) lock()   { s.l.Lock() }
func (s *State) unlock() { s.l.Unlock() }

func (s *State) setRunning(pid int)      { s.Running, s.Pid = true, pid }
func (s *State) setStopped(exitCode int) { s.Running, s.Pid, s.ExitCode = false, 0, exitCode }

// process stands in for the lxc-start child: it ignores SIGTERM.
type process struct {
	pid     int
	signals chan int
	exited  chan int
}

func startProcess(pid int) *process {
	p := &process{pid: pid, signals: make(chan int, 4), exited: make(chan int, 1)}
	go func() {
		for sig := range p.signals {
			if sig == 9 {
				p.exited <- 137
				return
			}
			// SIGTERM: the entrypoint traps it and keeps running
		}
	}()
	return p
}

type Container struct {
	State
	Id       string
	cmd      *process
	waitLock chan struct{}
}

func (container *Container) monitor() {
	exitCode := <-container.cmd.exited
	container.State.setStopped(exitCode)
	close(container.waitLock)
}

func (container *Container) WaitTimeout(timeout time.Duration) error {
	select {
	case <-container.waitLock:
		return nil
	case <-time.After(timeout):
		return errors.New("timeout")
	}
}

func (container *Container) Wait() int {
	<-container.waitLock
	return container.State.ExitCode
}

// kill expects the State lock to be held.
func (container *Container) kill() error {
	if !container.State.Running {
		return nil
	}
	container.cmd.signals <- 9 // lxc-kill -n <id> 9
	if err := container.WaitTimeout(time.Second); err != nil {
		return fmt.Errorf("container %s did not die: %v", container.Id, err)
	}
	container.Wait()
	return nil
}

func (container *Container) Kill() error {
	container.State.lock()
	defer container.State.unlock()
	if !container.State.Running {
		return nil
	}
	return container.kill()
}

func (container *Container) Stop(timeout time.Duration) error {
	container.State.lock()
	defer container.State.unlock()
	if !container.State.Running {
		return nil
	}
	// 1. Send a SIGTERM
	container.cmd.signals <- 15
	// 2. Wait for the process to exit on its own
	if err := container.WaitTimeout(timeout); err != nil {
		log.Printf("Container %v failed to exit within %v of SIGTERM - using the force", container.Id, timeout)
		if err := container.kill(); err != nil { // fix: lock is already held
			return err
		}
	}
	return nil
}

type Runtime struct {
	containers map[string]*Container
}

func (runtime *Runtime) Create(id string, pid int) *Container {
	c := &Container{Id: id, waitLock: make(chan struct{})}
	c.cmd = startProcess(pid)
	c.State.setRunning(pid)
	go c.monitor()
	runtime.containers[id] = c
	return c
}

func (runtime *Runtime) Destroy(container *Container) error {
	if err := container.Stop(50 * time.Millisecond); err != nil {
		return fmt.Errorf("could not stop running container, cannot remove: %v", err)
	}
	delete(runtime.containers, container.Id)
	return nil
}

func main() {
	runtime := &Runtime{containers: make(map[string]*Container)}
	c := runtime.Create("4e1f0a", 4242)
	if err := runtime.Destroy(c); err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("destroyed", c.Id, "exit code", c.State.ExitCode)
}
