// Project: moby/moby (Docker Engine), 1.11 development cycle, Windows daemon, April 2016.
// Files/functions: libcontainerd/container_windows.go (waitExit), client_windows.go (Signal),
// client.go (lock/unlock on pkg/locker, getContainer, deleteContainer), daemon/kill.go
// (killWithSignal, kill), daemon/monitor.go (StateChanged), container/state.go (State mutex).
// Fix: moby/moby PR #21953 "Windows: Fix deamon deadlock in docker stop".
//
// When a Windows container's init process exits, waitExit takes the per-container
// libcontainerd name lock (clnt.lock(containerID), pkg/locker) and keeps it, through a
// deferred unlock, while it shuts the compute system down and calls back into the daemon
// through the Backend interface: backend.StateChanged(StateExit) locks the container.
// Meanwhile "docker stop" runs killWithSignal, which holds the container lock and calls
// daemon.kill -> containerd.Signal, and client.Signal takes clnt.lock(containerID): the two
// paths take the two locks in opposite orders and the daemon hangs. The fix releases the
// libcontainerd lock before calling backend.StateChanged, as the Linux client already did.
package main

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type lockCtr struct {
	mu      sync.Mutex
	waiters int32
}

func (l *lockCtr) inc()         { atomic.AddInt32(&l.waiters, 1) }
func (l *lockCtr) dec()         { atomic.AddInt32(&l.waiters, -1) }
func (l *lockCtr) count() int32 { return atomic.LoadInt32(&l.waiters) }
func (l *lockCtr) Lock()        { l.mu.Lock() }
func (l *lockCtr) Unlock()      { l.mu.Unlock() }

type Locker struct {
	mu    sync.Mutex
	locks map[string]*lockCtr
}

func (l *Locker) Lock(name string) {
	l.mu.Lock()
	nameLock, exists := l.locks[name]
	if !exists {
		nameLock = &lockCtr{}
		l.locks[name] = nameLock
	}
	nameLock.inc()
	l.mu.Unlock()
	nameLock.Lock()
	nameLock.dec()
}

func (l *Locker) Unlock(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	nameLock, exists := l.locks[name]
	if !exists {
		return
	}
	if nameLock.count() == 0 {
		delete(l.locks, name)
	}
	nameLock.Unlock()
}

type StateInfo struct {
	State    string
	ExitCode uint32
}

type Backend interface {
	StateChanged(containerID string, state StateInfo) error
}

type client struct {
	backend    Backend
	locker     *Locker
	mapMutex   sync.RWMutex
	containers map[string]*container
}

func (clnt *client) lock(containerID string)   { clnt.locker.Lock(containerID) }
func (clnt *client) unlock(containerID string) { clnt.locker.Unlock(containerID) }

func (clnt *client) getContainer(containerID string) (*container, error) {
	clnt.mapMutex.RLock()
	defer clnt.mapMutex.RUnlock()
	ctr, ok := clnt.containers[containerID]
	if !ok {
		return nil, fmt.Errorf("invalid container: %s", containerID)
	}
	return ctr, nil
}

func (clnt *client) deleteContainer(containerID string) {
	clnt.mapMutex.Lock()
	defer clnt.mapMutex.Unlock()
	delete(clnt.containers, containerID)
}

type container struct {
	client              *client
	containerID         string
	manualStopRequested bool
}

// shutdown stands in for hcsshim ShutdownComputeSystem, which can take a while.
func (ctr *container) shutdown() { time.Sleep(100 * time.Millisecond) }

func (ctr *container) waitExit(exitCode uint32, isFirstProcessToStart bool) error {
	ctr.client.lock(ctr.containerID)

	si := StateInfo{State: "exit", ExitCode: exitCode}
	if isFirstProcessToStart {
		ctr.shutdown()
		ctr.client.deleteContainer(ctr.containerID)
	}
	// Release the libcontainerd lock before calling into the backend.
	ctr.client.unlock(ctr.containerID)
	return ctr.client.backend.StateChanged(ctr.containerID, si)
}

func (clnt *client) Signal(containerID string, sig int) error {
	clnt.lock(containerID)
	defer clnt.unlock(containerID)
	cont, err := clnt.getContainer(containerID)
	if err != nil {
		return err
	}
	cont.manualStopRequested = true
	return nil
}

type State struct {
	sync.Mutex
	Running bool
}

type CommonContainer struct {
	*State
	ID string
}

type Container struct{ CommonContainer }
type Daemon struct {
	containers map[string]*Container
	containerd *client
}

func (daemon *Daemon) StateChanged(id string, e StateInfo) error {
	c := daemon.containers[id]
	if c == nil {
		return errors.New("no such container")
	}
	switch e.State {
	case "exit":
		c.Lock()
		defer c.Unlock()
		c.Running = false
	}
	return nil
}

func (daemon *Daemon) kill(c *Container, sig int) error {
	return daemon.containerd.Signal(c.ID, sig)
}

func (daemon *Daemon) killWithSignal(c *Container, sig int) error {
	c.Lock()
	defer c.Unlock()
	if !c.Running {
		return errors.New("container not running")
	}
	return daemon.kill(c, sig)
}

func main() {
	c := &Container{CommonContainer{State: &State{Running: true}, ID: "c1"}}
	d := &Daemon{containers: map[string]*Container{"c1": c}}
	clnt := &client{backend: d, locker: &Locker{locks: map[string]*lockCtr{}}, containers: map[string]*container{}}
	d.containerd = clnt
	ctr := &container{client: clnt, containerID: "c1"}
	clnt.containers["c1"] = ctr
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the init process exited
		defer wg.Done()
		ctr.waitExit(0, true)
	}()
	time.Sleep(20 * time.Millisecond)
	go func() { // docker stop
		defer wg.Done()
		d.killWithSignal(c, 15)
	}()
	wg.Wait()
	fmt.Println("exited cleanly")
}
