// Project: containerd v0.2.x (supervisor/monitor_linux.go, supervisor/supervisor.go, supervisor/start.go), as shipped with Docker 1.13
// Issue: containerd/containerd#436 "Fix deadlock in monitor" (reported as moby/moby#30026 "docker top hangs")
//
// Monitor.start handles every epoll event with the monitor lock m.m held
// (line 92). For an OOM eventfd it sends the container id on the buffered
// m.ooms channel (line 106) without releasing m.m. The supervisor's oomHandler
// turns each id into an OOMTask on the buffered task queue (line 130), which only the
// task loop drains. When a burst of OOM notifications arrives while the task loop is
// busy starting a container, s.tasks and then m.ooms fill up and Monitor.start blocks in
// the send still holding m.m. The start task then registers the new process with
// Monitor.Monitor, which needs m.m (line 74, called at line 165): the
// task loop can never drain s.tasks again. main() sends a StartTask and makes the
// container that is already monitored for OOM fire a burst of notifications.
package main

import (
	"fmt"
	"sync"
	"time"
)

const (
	defaultBufferSize = 2 // 2048 in containerd; small here
	oomBufferSize     = 2 // 1024 in containerd; small here
)

// ---- runtime ----

type Process struct {
	ContainerID string
	exitFd      int
}

func (p *Process) ExitFD() int { return p.exitFd }

type OOM struct {
	containerID string
	fd          int
	removed     bool
}

func (o *OOM) ContainerID() string { return o.containerID }
func (o *OOM) FD() int             { return o.fd }
func (o *OOM) Flush()              {} // reads the eventfd counter
func (o *OOM) Removed() bool       { return o.removed }
func (o *OOM) Close() error        { return nil }

// ---- supervisor/monitor_linux.go ----

type Monitor struct {
	m         sync.Mutex
	receivers map[int]interface{}
	exits     chan *Process
	ooms      chan string
	epoll     chan int // stands in for the epoll fd
}

func NewMonitor() *Monitor {
	m := &Monitor{
		receivers: make(map[int]interface{}),
		exits:     make(chan *Process, 1024),
		ooms:      make(chan string, oomBufferSize),
		epoll:     make(chan int, 16),
	}
	go m.start()
	return m
}

func (m *Monitor) Exits() chan *Process { return m.exits }
func (m *Monitor) OOMs() chan string    { return m.ooms }

// Monitor adds a process to the list of the one being monitored
func (m *Monitor) Monitor(p *Process) error {
	m.m.Lock()
	defer m.m.Unlock()
	fd := p.ExitFD()
	// syscall.EpollCtl(m.epollFd, syscall.EPOLL_CTL_ADD, fd, ...)
	m.receivers[fd] = p
	return nil
}

// MonitorOOM adds a container to the list of the ones monitored for OOM
func (m *Monitor) MonitorOOM(o *OOM) error {
	m.m.Lock()
	defer m.m.Unlock()
	m.receivers[o.FD()] = o
	return nil
}

func (m *Monitor) start() {
	for fd := range m.epoll { // archutils.EpollWait
		m.m.Lock()
		r := m.receivers[fd]
		switch t := r.(type) {
		case *Process:
			delete(m.receivers, fd)
			// syscall.EpollCtl(m.epollFd, syscall.EPOLL_CTL_DEL, fd, ...)
			m.exits <- t
		case *OOM:
			// always flush the event fd
			t.Flush()
			if t.Removed() {
				delete(m.receivers, fd)
				t.Close()
			} else {
				m.ooms <- t.ContainerID()
			}
		}
		m.m.Unlock()
	}
}

// ---- supervisor ----

type Task interface{}

type StartTask struct {
	ID  string
	Err chan error
}

type OOMTask struct{ ID string }

type Supervisor struct {
	tasks   chan Task
	monitor *Monitor
}

func (s *Supervisor) SendTask(evt Task) {
	s.tasks <- evt
}

func (s *Supervisor) oomHandler() {
	for id := range s.monitor.OOMs() {
		e := &OOMTask{ID: id}
		s.SendTask(e)
	}
}

func (s *Supervisor) Start() {
	go func() {
		for i := range s.tasks {
			s.handleTask(i)
		}
	}()
}

func (s *Supervisor) handleTask(i Task) {
	switch t := i.(type) {
	case *StartTask:
		t.Err <- s.start(t)
	case *OOMTask:
		fmt.Println("containerd: container oom:", t.ID)
	}
}

func (s *Supervisor) start(t *StartTask) error {
	// runtime container.Start: spawn the shim and wait for runc create.
	time.Sleep(50 * time.Millisecond)
	p := &Process{ContainerID: t.ID, exitFd: 21}
	return s.monitorProcess(p)
}

func (s *Supervisor) monitorProcess(p *Process) error {
	return s.monitor.Monitor(p)
}

func main() {
	s := &Supervisor{tasks: make(chan Task, defaultBufferSize), monitor: NewMonitor()}
	go s.oomHandler()
	s.Start()

	// A running container is already watched for OOM.
	s.monitor.MonitorOOM(&OOM{containerID: "web", fd: 11})

	// docker run: start a new container.
	st := &StartTask{ID: "db", Err: make(chan error, 1)}
	s.SendTask(st)

	// Meanwhile the "web" container's cgroup keeps hitting its memory limit.
	time.Sleep(10 * time.Millisecond)
	for i := 0; i < 8; i++ {
		s.monitor.epoll <- 11
	}

	if err := <-st.Err; err != nil {
		fmt.Println("start failed:", err)
		return
	}
	fmt.Println("container db started")
}
