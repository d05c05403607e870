// Project: moby/moby (daemon/container.go, daemon/state.go, daemon/monitor.go, pkg/promise/promise.go), Docker 1.4
// development, late 2014 (approximate).
// Bug: Container.Start holds the container lock (the mutex of the embedded *State) while waitForStart waits for the
// monitor's startSignal or for monitor.Start to return through promise.Go, and when the first execdriver Run fails the
// monitor's deferred cleanup calls SetStopped, which takes that same lock, so each waits for the other (fixed by the
// afterRun flag: "this variable indicates where we in execution flow: before Run or after").
package main

import (
	"fmt"
	"sync"
)

// Go (pkg/promise) is a basic promise implementation: it wraps calls a function in a goroutine,
// and returns a channel which will later return the function's return value.
func Go(f func() error) chan error {
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	return ch
}

type ExitStatus struct{ ExitCode int } // daemon/execdriver
type ProcessConfig struct{ Entrypoint string }
type StartCallback func(*ProcessConfig, int)

type Driver interface {
	Run(c *ProcessConfig, startCallback StartCallback) (ExitStatus, error)
}

type fakeDriver struct{} // the native (libcontainer) driver

func (fakeDriver) Run(c *ProcessConfig, startCallback StartCallback) (ExitStatus, error) {
	if c.Entrypoint != "/bin/true" {
		return ExitStatus{ExitCode: -1}, fmt.Errorf("exec: %q: executable file not found in $PATH", c.Entrypoint)
	}
	startCallback(c, 4242)
	return ExitStatus{ExitCode: 0}, nil
}

// State (daemon/state.go); Container embeds *State, so container.Lock() is this mutex.
type State struct {
	sync.Mutex
	Running  bool
	Pid      int
	ExitCode int
	Error    string
	waitChan chan struct{}
}

func NewState() *State { return &State{waitChan: make(chan struct{})} }

func (s *State) setRunning(pid int) {
	s.Running = true
	s.Pid = pid
	close(s.waitChan) // fire waiters for start
	s.waitChan = make(chan struct{})
}

func (s *State) SetStopped(exitStatus *ExitStatus) {
	s.Lock()
	s.setStopped(exitStatus)
	s.Unlock()
}

func (s *State) setStopped(exitStatus *ExitStatus) {
	s.Running = false
	s.Pid = 0
	s.ExitCode = exitStatus.ExitCode
	close(s.waitChan) // fire waiters for stop
	s.waitChan = make(chan struct{})
}

type Container struct {
	*State
	ID      string
	Path    string
	command *ProcessConfig
	monitor *containerMonitor
	daemon  *Daemon
}

type Daemon struct{ execDriver Driver }

func (daemon *Daemon) Run(c *Container, startCallback StartCallback) (ExitStatus, error) {
	return daemon.execDriver.Run(c.command, startCallback)
}

func (container *Container) Start() (err error) {
	container.Lock()
	defer container.Unlock()
	if container.Running {
		return nil
	}
	// if we encounter an error during start we need to ensure that any other
	// setup has been cleaned up properly
	defer func() {
		if err != nil {
			container.Error = err.Error()
			// if no one else has set it, make sure we don't leave it at zero
			if container.ExitCode == 0 {
				container.ExitCode = 128
			}
			container.toDisk()
			container.cleanup()
		}
	}()
	container.command = &ProcessConfig{Entrypoint: container.Path}
	return container.waitForStart()
}

func (container *Container) waitForStart() error {
	container.monitor = newContainerMonitor(container)
	// block until we either receive an error from the initial start of the container's
	// process or until the process is running in the container
	select {
	case <-container.monitor.startSignal:
	case err := <-Go(container.monitor.Start):
		return err
	}
	return nil
}

func (container *Container) toDisk() error { return nil }
func (container *Container) cleanup()      {}

type containerMonitor struct {
	container   *Container
	startSignal chan struct{}
}

func newContainerMonitor(container *Container) *containerMonitor {
	return &containerMonitor{container: container, startSignal: make(chan struct{})}
}

// Start starts the containers process and monitors it according to the restart policy
func (m *containerMonitor) Start() error {
	var (
		err        error
		exitStatus ExitStatus
	)

	// ensure that when the monitor finally exits we release the networking and unmount the rootfs
	defer func() {
		m.container.SetStopped(&exitStatus)
		m.Close()
	}()

	if exitStatus, err = m.container.daemon.Run(m.container, m.callback); err != nil {
		// if we receive an internal error from the initial start of a container then lets
		// return it instead of entering the restart loop
		m.container.ExitCode = -1
		m.resetContainer(false)
		return err
	}

	// here container.Lock is already lost
	m.resetContainer(true)
	return err
}

func (m *containerMonitor) resetContainer(lock bool) {
	if lock {
		m.container.Lock()
		defer m.container.Unlock()
	}
	m.container.command = &ProcessConfig{Entrypoint: m.container.Path}
}

func (m *containerMonitor) Close() error {
	m.container.cleanup()
	return m.container.toDisk()
}

func (m *containerMonitor) callback(processConfig *ProcessConfig, pid int) {
	m.container.setRunning(pid)

	// signal that the process has started
	// close channel only if not closed
	select {
	case <-m.startSignal:
	default:
		close(m.startSignal)
	}
	m.container.toDisk()
}

func main() {
	// docker run busybox nonexistent-binary
	bad := &Container{State: NewState(), ID: "c2", Path: "nonexistent-binary", daemon: &Daemon{execDriver: fakeDriver{}}}
	err := bad.Start()
	fmt.Println("c2 start error:", err, "exit code", bad.ExitCode)
}
