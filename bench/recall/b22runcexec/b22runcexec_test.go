// Project: opencontainers/runc (libcontainer)
// Bug: linuxContainer.Exec() takes the container mutex c.m and then waits for
//      the exec fifo to be opened by the container's init. The parent-side
//      handshake that lets init proceed to the fifo first persists the state via
//      c.updateState(), which also needs c.m, so neither side can progress.
// Fix: Exec only snapshots the fifo path / init pid under c.m and waits for the
//      fifo without holding the container mutex; it re-takes c.m afterwards to
//      record the Running state.

package b22runcexec

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

type Status int

const (
	Created Status = iota
	Running
	Stopped
)

func (s Status) String() string {
	switch s {
	case Created:
		return "created"
	case Running:
		return "running"
	case Stopped:
		return "stopped"
	}
	return fmt.Sprintf("unknown(%d)", int(s))
}

type State struct {
	ID             string
	InitProcessPid int
	Status         Status
	Created        time.Time
	Annotations    map[string]string
}

type fifoResult struct {
	file string
	err  error
}

type initProcess struct {
	pid      int
	fifoPath string
	fifoOpen chan fifoResult
	bootDone chan struct{}
}

func (p *initProcess) signal(sig int) error {
	if p.pid <= 0 {
		return errors.New("process not started")
	}
	return nil
}

type linuxContainer struct {
	id          string
	root        string
	m           sync.Mutex
	status      Status
	initProcess *initProcess
	created     time.Time
	annotations map[string]string
	saved       []State
}

func (c *linuxContainer) ID() string { return c.id }

func (c *linuxContainer) currentState() State {
	st := State{ID: c.id, Status: c.status, Created: c.created, Annotations: c.annotations}
	if c.initProcess != nil {
		st.InitProcessPid = c.initProcess.pid
	}
	return st
}

func (c *linuxContainer) State() (State, error) {
	c.m.Lock()
	defer c.m.Unlock()
	return c.currentState(), nil
}

func (c *linuxContainer) saveState(s State) error {
	c.saved = append(c.saved, s)
	return nil
}

func (c *linuxContainer) updateState(process *initProcess) (State, error) {
	c.m.Lock()
	defer c.m.Unlock()
	if process != nil {
		c.initProcess = process
	}
	st := c.currentState()
	return st, c.saveState(st)
}

func (c *linuxContainer) Signal(sig int) error {
	c.m.Lock()
	defer c.m.Unlock()
	if c.status == Stopped {
		return errors.New("container not running")
	}
	return c.initProcess.signal(sig)
}

func awaitFifoOpen(p *initProcess) <-chan fifoResult {
	ch := make(chan fifoResult, 1)
	go func() {
		ch <- <-p.fifoOpen
	}()
	return ch
}

func handleFifoResult(r fifoResult) error {
	if r.err != nil {
		return fmt.Errorf("exec fifo %s: %w", r.file, r.err)
	}
	return nil
}

func (c *linuxContainer) Exec() error {
	c.m.Lock()
	defer c.m.Unlock()
	return c.exec()
}

func (c *linuxContainer) exec() error {
	path := filepath.Join(c.root, "exec.fifo")
	ch := awaitFifoOpen(c.initProcess)
	for {
		select {
		case result := <-ch:
			if err := handleFifoResult(result); err != nil {
				return err
			}
			c.status = Running
			return nil
		case <-time.After(100 * time.Millisecond):
			if c.initProcess.pid <= 0 {
				return fmt.Errorf("container init exited before opening %s", path)
			}
		}
	}
}

// parentHandshake is the parent side of the init bootstrap: it records the
// init process in the container state and only then lets init open the fifo.
func parentHandshake(c *linuxContainer, p *initProcess) {
	<-p.bootDone
	if _, err := c.updateState(p); err != nil {
		p.fifoOpen <- fifoResult{file: p.fifoPath, err: err}
		return
	}
	p.fifoOpen <- fifoResult{file: p.fifoPath}
}

func TestProbe(t *testing.T) {
	p := &initProcess{pid: 4242, fifoPath: "/run/runc/ctr1/exec.fifo",
		fifoOpen: make(chan fifoResult), bootDone: make(chan struct{})}
	c := &linuxContainer{id: "ctr1", root: "/run/runc/ctr1", status: Created,
		initProcess: p, created: time.Now(), annotations: map[string]string{"bundle": "/bundle"}}

	go parentHandshake(c, p)
	go func() {
		time.Sleep(50 * time.Millisecond)
		close(p.bootDone)
	}()

	if err := c.Exec(); err != nil {
		t.Fatalf("exec: %v", err)
	}
	st, _ := c.State()
	if st.Status != Running {
		t.Fatalf("status = %v, want running", st.Status)
	}
}
