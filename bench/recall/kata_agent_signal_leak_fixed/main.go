// Project: kata-containers agent (grpc.go, agent.go: agentGRPC.SignalProcess / sandbox.getContainer)
// Bug: SignalProcess took the container's mutex, then looked up the target process by
// exec ID and returned early on "process not found" without unlocking. The next request
// touching that container (WaitProcess/RemoveContainer from the runtime's cleanup) blocks
// forever on ctr.Lock(), wedging the whole pod teardown.
// Upstream fix: unlock on every path via defer ctr.Unlock() right after Lock (several
// "missing unlock in error path" fixes in the agent; exact PR not recalled; shape modelled
// faithfully).
package main

import (
	"context"
	"fmt"
	"sync"
	"syscall"
)

type process struct {
	id       string
	pid      int
	exitCode int
	exited   bool
}

type container struct {
	sync.Mutex
	id        string
	processes map[string]*process
}

type sandbox struct {
	sync.RWMutex
	containers map[string]*container
}

type agentGRPC struct {
	sandbox *sandbox
}

type SignalProcessRequest struct {
	ContainerID, ExecID string
	Signal              syscall.Signal
}

type RemoveContainerRequest struct{ ContainerID string }

func (s *sandbox) getContainer(id string) (*container, error) {
	s.RLock()
	defer s.RUnlock()
	ctr, ok := s.containers[id]
	if !ok {
		return nil, fmt.Errorf("container %s not found", id)
	}
	return ctr, nil
}

func (c *container) getProcess(execID string) (*process, error) {
	if execID == "" {
		execID = c.id // init process
	}
	p, ok := c.processes[execID]
	if !ok {
		return nil, fmt.Errorf("process %s not found in container %s", execID, c.id)
	}
	return p, nil
}

func (a *agentGRPC) SignalProcess(ctx context.Context, req *SignalProcessRequest) error {
	ctr, err := a.sandbox.getContainer(req.ContainerID)
	if err != nil {
		return err
	}
	ctr.Lock()
	defer ctr.Unlock()
	proc, err := ctr.getProcess(req.ExecID)
	if err != nil {
		return err
	}
	if proc.exited {
		return nil
	}
	// signal the process (syscall.Kill(proc.pid, req.Signal) in the real agent)
	if req.Signal == syscall.SIGKILL || req.Signal == syscall.SIGTERM {
		proc.exited, proc.exitCode = true, 128+int(req.Signal)
	}
	return nil
}

func (a *agentGRPC) RemoveContainer(ctx context.Context, req *RemoveContainerRequest) error {
	ctr, err := a.sandbox.getContainer(req.ContainerID)
	if err != nil {
		return err
	}
	ctr.Lock()
	for id, p := range ctr.processes {
		if !p.exited {
			ctr.Unlock()
			return fmt.Errorf("process %s still running", id)
		}
	}
	ctr.Unlock()

	a.sandbox.Lock()
	delete(a.sandbox.containers, req.ContainerID)
	a.sandbox.Unlock()
	return nil
}

func main() {
	ctx := context.Background()
	a := &agentGRPC{sandbox: &sandbox{containers: map[string]*container{
		"c1": {id: "c1", processes: map[string]*process{"c1": {id: "c1", pid: 42}}},
	}}}
	reqs := []*SignalProcessRequest{
		{ContainerID: "c1", Signal: syscall.SIGKILL},
		{ContainerID: "c1", ExecID: "exec-7", Signal: syscall.SIGTERM}, // exec already reaped
	}
	for _, r := range reqs {
		if err := a.SignalProcess(ctx, r); err != nil {
			fmt.Println("signal:", err)
		}
	}
	if err := a.RemoveContainer(ctx, &RemoveContainerRequest{ContainerID: "c1"}); err != nil {
		fmt.Println("remove:", err)
	}
	fmt.Println("containers left:", len(a.sandbox.containers))
}
