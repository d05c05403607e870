// Project: docker/moby 1.11 (libcontainerd/container_windows.go, libcontainerd/client_windows.go, pkg/locker, daemon/kill.go, daemon/monitor.go)
// Issue: moby/moby#21953 "Windows: Fix deamon deadlock in docker stop"
//
// libcontainerd serialises operations per container with a pkg/locker lock kept in
// a map (client.lock, line 94; lockCtr.Lock, line 35). When the
// container's init process exits, container.waitExit takes that per-container lock
// (line 143) and, still holding it through the defer, notifies the daemon with
// backend.StateChanged (line 151); the daemon's StateChanged locks the container
// (line 175). docker stop goes the other way: killWithSignal locks the container
// (line 189) and calls containerd.Signal (line 184), which takes the
// per-container libcontainerd lock (line 116). container lock -> libcontainerd
// lock on one side, libcontainerd lock -> container lock on the other. main() stops the
// container just as its process exits on its own.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ---- pkg/locker ----

type Locker struct {
	mu    sync.Mutex
	locks map[string]*lockCtr
}

type lockCtr struct {
	mu      sync.Mutex
	waiters int32
}

func (l *lockCtr) Lock()   { l.mu.Lock() }
func (l *lockCtr) Unlock() { l.mu.Unlock() }

// Lock locks a mutex with the given name. If it doesn't exist, one is created.
func (l *Locker) Lock(name string) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = make(map[string]*lockCtr)
	}
	nameLock, exists := l.locks[name]
	if !exists {
		nameLock = &lockCtr{}
		l.locks[name] = nameLock
	}
	nameLock.waiters++
	l.mu.Unlock()

	nameLock.Lock()
	l.mu.Lock()
	nameLock.waiters--
	l.mu.Unlock()
}

// Unlock unlocks the mutex with the given name.
func (l *Locker) Unlock(name string) error {
	l.mu.Lock()
	nameLock, exists := l.locks[name]
	if !exists {
		l.mu.Unlock()
		return errors.New("no such lock")
	}
	if nameLock.waiters == 0 {
		delete(l.locks, name)
	}
	nameLock.Unlock()
	l.mu.Unlock()
	return nil
}

// ---- libcontainerd ----

type StateInfo struct {
	State    string
	ExitCode uint32
	Pid      uint32
}

// Backend defines callbacks that the client of the library needs to implement.
type Backend interface {
	StateChanged(containerID string, state StateInfo) error
}

type client struct {
	backend    Backend
	containers map[string]*lcontainer
	locker     *Locker
	mapMutex   sync.RWMutex // protects read/write operations from containers map
}

func (clnt *client) lock(containerID string)   { clnt.locker.Lock(containerID) }
func (clnt *client) unlock(containerID string) { clnt.locker.Unlock(containerID) }

func (clnt *client) getContainer(containerID string) (*lcontainer, error) {
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

// Signal handles `docker stop` on Windows.
func (clnt *client) Signal(containerID string, sig int) error {
	// Get the container as we need it to find the pid of the process.
	clnt.lock(containerID)
	defer clnt.unlock(containerID)
	cont, err := clnt.getContainer(containerID)
	if err != nil {
		return err
	}
	fmt.Printf("libcontainerd: signal %d to %s (pid %d)\n", sig, containerID, cont.pid)
	return nil
}

type lcontainer struct {
	client      *client
	containerID string
	pid         uint32
}

// waitExit runs as a goroutine waiting for the process to exit.
func (ctr *lcontainer) waitExit(pid uint32, isFirstProcessToStart bool) error {
	// hcsshim.WaitForProcessInComputeSystem returns: the process exited.
	time.Sleep(10 * time.Millisecond)
	si := StateInfo{State: "exit", ExitCode: 0, Pid: pid}

	if isFirstProcessToStart {
		// hcsshim.ShutdownComputeSystem(ctr.containerID, ...)

		// BUGBUG - Is taking the lock necessary here? Should it just be taken for
		// the deleteContainer call, not for the restart logic? @jhowardmsft
		ctr.client.lock(ctr.containerID)
		defer ctr.client.unlock(ctr.containerID)

		// Remove process from list if we have exited
		ctr.client.deleteContainer(ctr.containerID)
	}

	// Call into the backend to notify it of the state change.
	if err := ctr.client.backend.StateChanged(ctr.containerID, si); err != nil {
		return err
	}
	return nil
}

// ---- daemon ----

type Container struct {
	sync.Mutex
	ID      string
	Running bool
}

type Daemon struct {
	containers map[string]*Container
	containerd *client
}

// StateChanged updates daemon state changes from containerd
func (daemon *Daemon) StateChanged(id string, e StateInfo) error {
	c := daemon.containers[id]
	switch e.State {
	case "exit":
		c.Lock()
		defer c.Unlock()
		c.Running = false
		fmt.Printf("daemon: container %s exited with code %d\n", id, e.ExitCode)
	}
	return nil
}

func (daemon *Daemon) kill(c *Container, sig int) error {
	return daemon.containerd.Signal(c.ID, sig)
}

// killWithSignal sends the container the given signal.
func (daemon *Daemon) killWithSignal(container *Container, sig int) error {
	container.Lock()
	defer container.Unlock()
	if !container.Running {
		return fmt.Errorf("container %s is not running", container.ID)
	}
	// daemon.LogContainerEvent, restart-manager cancel, ... under the lock
	time.Sleep(30 * time.Millisecond)
	if err := daemon.kill(container, sig); err != nil {
		return err
	}
	return nil
}

func main() {
	daemon := &Daemon{containers: map[string]*Container{}}
	clnt := &client{containers: map[string]*lcontainer{}, locker: &Locker{}, backend: daemon}
	daemon.containerd = clnt

	c := &Container{ID: "3f2a", Running: true}
	daemon.containers[c.ID] = c
	lc := &lcontainer{client: clnt, containerID: c.ID, pid: 1234}
	clnt.containers[c.ID] = lc

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		lc.waitExit(lc.pid, true)
	}()

	// docker stop 3f2a: SIGTERM first.
	if err := daemon.killWithSignal(c, 15); err != nil {
		fmt.Println("stop:", err)
	}
	wg.Wait()
	fmt.Println("stopped")
}
