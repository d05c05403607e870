// Project: containerd (runtime/v2/runc/task/service.go, containerd-shim-runc-v2)
// Bug: Create() holds s.mu and calls the handleStarted closure returned by preStart(). If
//   init already exited, handleStarted calls s.handleProcessExit, which locks s.mu again:
//   the shim's create handler self-deadlocks (regression from #8617).
// Upstream fix: handleStarted gets a muLocked flag and skips taking s.mu (containerd #9104, fixes #9103)

package main

import (
	"fmt"
	"sync"
	"time"
)

type Exit struct {
	Pid    int
	Status int
}

type Process interface {
	Pid() int
	SetExited(status int)
}

type Init struct {
	pid    int
	status int
	exited bool
}

func (p *Init) Pid() int             { return p.pid }
func (p *Init) SetExited(status int) { p.status, p.exited = status, true }

type Container struct {
	ID   string
	init *Init
}

func (c *Container) Pid() int      { return c.init.pid }
func (c *Container) Init() Process { return c.init }

type containerProcess struct {
	Container *Container
	Process   Process
}

type CreateTaskRequest struct {
	ID     string
	Bundle string
}

type service struct {
	mu          sync.Mutex
	containers  map[string]*Container
	events      chan any
	ec          chan Exit
	lifecycleMu sync.Mutex
	running     map[int][]containerProcess
	// exitSubscribers are notified of every process exit while a start is in flight
	exitSubscribers map[*map[int][]Exit]struct{}
}

func NewTaskService() *service {
	s := &service{
		containers:      make(map[string]*Container),
		events:          make(chan any, 128),
		ec:              make(chan Exit, 32),
		running:         make(map[int][]containerProcess),
		exitSubscribers: make(map[*map[int][]Exit]struct{}),
	}
	go s.processExits()
	return s
}

// preStart prepares for starting a container process and handling its exit.
func (s *service) preStart(c *Container) (handleStarted func(*Container, Process), cleanup func()) {
	exits := make(map[int][]Exit)
	s.lifecycleMu.Lock()
	defer s.lifecycleMu.Unlock()
	s.exitSubscribers[&exits] = struct{}{}

	handleStarted = func(c *Container, p Process) {
		var pid int
		if p != nil {
			pid = p.Pid()
		}
		s.lifecycleMu.Lock()
		ees, exited := exits[pid]
		delete(s.exitSubscribers, &exits)
		exits = nil
		if pid == 0 || exited {
			s.lifecycleMu.Unlock()
			for _, ee := range ees {
				s.handleProcessExit(ee, c, p)
			}
		} else {
			s.running[pid] = append(s.running[pid], containerProcess{Container: c, Process: p})
			s.lifecycleMu.Unlock()
		}
	}
	cleanup = func() {
		if exits != nil {
			s.lifecycleMu.Lock()
			defer s.lifecycleMu.Unlock()
			delete(s.exitSubscribers, &exits)
		}
	}
	return handleStarted, cleanup
}

// newContainer runs `runc create`; a broken entrypoint makes init exit immediately.
func (s *service) newContainer(r *CreateTaskRequest) *Container {
	c := &Container{ID: r.ID, init: &Init{pid: 4242}}
	s.ec <- Exit{Pid: c.init.pid, Status: 127}
	time.Sleep(5 * time.Millisecond) // reaper races with us
	return c
}

// Create a new initial process and container with the underlying OCI runtime.
func (s *service) Create(r *CreateTaskRequest) (uint32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()

	handleStarted, cleanup := s.preStart(nil)
	defer cleanup()

	container := s.newContainer(r)
	s.containers[r.ID] = container
	s.send(fmt.Sprintf("TaskCreate %s pid=%d", r.ID, container.Pid()))

	// The following line cannot return an error as the only state in which that
	// could happen would also cause the container.Pid() call above to nil-deference panic.
	proc := container.Init()
	handleStarted(container, proc)

	return uint32(container.Pid()), nil
}

func (s *service) processExits() {
	for e := range s.ec {
		s.lifecycleMu.Lock()
		for subscriber := range s.exitSubscribers {
			(*subscriber)[e.Pid] = append((*subscriber)[e.Pid], e)
		}
		cps := s.running[e.Pid]
		delete(s.running, e.Pid)
		s.lifecycleMu.Unlock()
		for _, cp := range cps {
			s.handleProcessExit(e, cp.Container, cp.Process)
		}
	}
}

func (s *service) handleProcessExit(e Exit, c *Container, p Process) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p.SetExited(e.Status)
	s.send(fmt.Sprintf("TaskExit %s pid=%d status=%d", c.ID, e.Pid, e.Status))
}

func (s *service) send(evt any) {
	s.events <- evt
}

func main() {
	svc := NewTaskService()
	pid, err := svc.Create(&CreateTaskRequest{ID: "redis", Bundle: "/run/containerd/io.containerd.runtime.v2.task/default/redis"})
	fmt.Println("created", pid, err)
	close(svc.events)
	for evt := range svc.events {
		fmt.Println(evt)
	}
}
