// Project: containerd (runtime/v2/runc/task/service.go, pkg/process/init.go).
//
// Bug (approximate): the runc shim's service.Delete held s.mu while it killed the
// init process and waited (p.Wait) for its exit to be recorded. Exits are delivered
// by the reaper: service.processExits -> service.checkProcesses, which takes s.mu
// to look the process up by pid and call p.SetExited (which unblocks p.Wait).
// Delete waits for checkProcesses, checkProcesses waits for s.mu -> the shim hangs
// and `ctr task delete --force` never returns.
// Fix: look the process up under s.mu, release it, wait for the exit, then retake
// s.mu only to remove the process from the map.
package containerdshim

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Exit is go-runc's runc.Exit.
type Exit struct {
	Timestamp time.Time
	Pid       int
	Status    int
}

type process interface {
	ID() string
	Pid() int
	ExitStatus() int
	Kill(ctx context.Context, signal uint32, all bool) error
	SetExited(status int)
	Wait()
	Delete(ctx context.Context) error
}

// fakeRuntime plays runc + the kernel: kill makes the process exit shortly
// after, and the reaper reports it on the exit channel.
type fakeRuntime struct {
	exits chan<- Exit
}

func (r *fakeRuntime) Kill(_ context.Context, pid int, sig syscall.Signal) error {
	time.AfterFunc(5*time.Millisecond, func() {
		r.exits <- Exit{Timestamp: time.Now(), Pid: pid, Status: 128 + int(sig)}
	})
	return nil
}

// Init is pkg/process.Init.
type Init struct {
	id      string
	pid     int
	runtime *fakeRuntime

	mu        sync.Mutex
	status    int
	exited    time.Time
	waitBlock chan struct{}
}

func (p *Init) ID() string { return p.id }
func (p *Init) Pid() int   { return p.pid }

func (p *Init) ExitStatus() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

func (p *Init) Kill(ctx context.Context, signal uint32, all bool) error {
	return p.runtime.Kill(ctx, p.pid, syscall.Signal(signal))
}

func (p *Init) SetExited(status int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.exited = time.Now()
	p.status = status
	close(p.waitBlock)
}

func (p *Init) Wait() {
	<-p.waitBlock // DEADLOCK HERE (Delete waits for the exit while holding s.mu)
}

func (p *Init) Delete(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited.IsZero() {
		return fmt.Errorf("process %s has not exited", p.id)
	}
	return nil
}

type service struct {
	mu        sync.Mutex
	processes map[string]process
	runtime   *fakeRuntime
}

func newService(exits chan<- Exit) *service {
	return &service{processes: map[string]process{}, runtime: &fakeRuntime{exits: exits}}
}

func (s *service) Create(id string, pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.processes[id] = &Init{id: id, pid: pid, runtime: s.runtime, waitBlock: make(chan struct{})}
}

func (s *service) getProcessLocked(id string) (process, error) {
	p, ok := s.processes[id]
	if !ok {
		return nil, fmt.Errorf("process %s does not exist", id)
	}
	return p, nil
}

// Delete force-deletes a task: kill, wait for the exit, delete.
func (s *service) Delete(ctx context.Context, id string) (*Exit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.getProcessLocked(id)
	if err != nil {
		return nil, err
	}
	if err := p.Kill(ctx, uint32(syscall.SIGKILL), true); err != nil {
		return nil, err
	}
	p.Wait()
	if err := p.Delete(ctx); err != nil {
		return nil, err
	}
	delete(s.processes, id)
	return &Exit{Pid: p.Pid(), Status: p.ExitStatus(), Timestamp: time.Now()}, nil
}

// checkProcesses is called for every exit reported by the reaper.
func (s *service) checkProcesses(e Exit) {
	s.mu.Lock() // DEADLOCK HERE (the test function, acting as the reaper loop)
	defer s.mu.Unlock()
	for _, p := range s.processes {
		if p.Pid() == e.Pid {
			p.SetExited(e.Status)
		}
	}
}

func TestForceDeleteRunningTask(t *testing.T) {
	exits := make(chan Exit, 32)
	s := newService(exits)
	s.Create("redis", 4242)

	var wg sync.WaitGroup
	var res *Exit
	var derr error
	wg.Add(1)
	go func() { // ttrpc handler: Delete
		defer wg.Done()
		res, derr = s.Delete(context.Background(), "redis")
	}()

	// The test plays service.processExits: deliver one exit from the reaper.
	e := <-exits
	s.checkProcesses(e)

	wg.Wait()
	if derr != nil {
		t.Fatal(derr)
	}
	if res.Status != 137 {
		t.Fatalf("exit status = %d, want 137", res.Status)
	}
}
