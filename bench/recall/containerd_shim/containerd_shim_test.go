// Project: containerd (runtime/v2/runc shim service).
// Bug (approximate, from memory): the shim service serialises access to its
// process table with service.mu (sync.Mutex). The reaper goroutine
// (processExits -> checkProcesses) took s.mu and then called the
// allProcesses() helper, which also takes s.mu, so the first container exit
// wedged the shim (no more exit events, Kill/Delete/State all hang). Exact
// issue/PR not remembered (approximate). Fix: iterate the table with a
// helper that expects s.mu to be held.
package containerd_shim

import (
	"context"
	"sync"
	"testing"
	"time"
)

// runc.Exit
type Exit struct {
	Timestamp time.Time
	Pid       int
	Status    int
}

// process.Process, trimmed.
type Process interface {
	ID() string
	Pid() int
	SetExited(status int)
	Status(ctx context.Context) (string, error)
}

type execProcess struct {
	id     string
	pid    int
	mu     sync.Mutex
	status int
	exited bool
}

func (p *execProcess) ID() string { return p.id }
func (p *execProcess) Pid() int   { return p.pid }
func (p *execProcess) SetExited(status int) {
	p.mu.Lock()
	p.exited, p.status = true, status
	p.mu.Unlock()
}
func (p *execProcess) Status(context.Context) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited {
		return "stopped", nil
	}
	return "running", nil
}

// events.TaskExit
type TaskExit struct {
	ContainerID string
	ID          string
	Pid         uint32
	ExitStatus  uint32
	ExitedAt    time.Time
}

type service struct {
	mu        sync.Mutex
	id        string
	processes map[string]Process

	ec     chan Exit
	events chan interface{}
}

func newService(id string) *service {
	s := &service{
		id:        id,
		processes: make(map[string]Process),
		ec:        make(chan Exit, 32),
		events:    make(chan interface{}, 128),
	}
	go s.processExits()
	return s
}

func (s *service) processExits() {
	for e := range s.ec {
		s.checkProcesses(e)
	}
}

// allProcesses returns a snapshot of all processes managed by the shim.
func (s *service) allProcesses() []Process {
	s.mu.Lock() // DEADLOCK HERE
	defer s.mu.Unlock()
	res := make([]Process, 0, len(s.processes))
	for _, p := range s.processes {
		res = append(res, p)
	}
	return res
}

func (s *service) checkProcesses(e Exit) {
	s.mu.Lock()
	defer s.mu.Unlock()

	for _, p := range s.allProcesses() {
		if p.Pid() == e.Pid {
			p.SetExited(e.Status)
			s.sendL(&TaskExit{
				ContainerID: s.id,
				ID:          p.ID(),
				Pid:         uint32(e.Pid),
				ExitStatus:  uint32(e.Status),
				ExitedAt:    e.Timestamp,
			})
			return
		}
	}
}

func (s *service) sendL(evt interface{}) {
	s.events <- evt
}

// State returns runtime state information for a process.
func (s *service) State(ctx context.Context, execID string) (string, error) {
	s.mu.Lock()
	p := s.processes[execID]
	s.mu.Unlock()
	return p.Status(ctx)
}

func TestReaperExit(t *testing.T) {
	s := newService("redis")
	s.mu.Lock()
	s.processes["redis"] = &execProcess{id: "redis", pid: 1000}
	s.processes["exec-1"] = &execProcess{id: "exec-1", pid: 1001}
	s.mu.Unlock()

	// reaper.Default notifies the shim that the exec process died.
	s.ec <- Exit{Timestamp: time.Now(), Pid: 1001, Status: 137}

	evt := (<-s.events).(*TaskExit)
	if evt.ID != "exec-1" || evt.ExitStatus != 137 {
		t.Fatalf("unexpected event %+v", evt)
	}
	if st, _ := s.State(context.Background(), "exec-1"); st != "stopped" {
		t.Fatalf("exec-1 state %q", st)
	}
	close(s.ec)
}
