// Project: containerd/containerd (runtime/v2/runc/v2/service.go service.Shutdown, getContainer, processExits/checkProcesses of containerd-shim-runc-v2), v1.4.x, fixed February 2021 (PR #4988 "runtime: fix shutdown runc v2 service", backported to 1.3 and 1.4).
// Bug: Shutdown locks s.mu and, when the shim no longer serves any container, cancels the shim context, closes the events channel and returns without unlocking s.mu; the missing Unlock was harmless while Shutdown ended with os.Exit, but after the shim started returning normally every later user of s.mu (the reaper's checkProcesses for a late exit, a State or Delete request still in flight) blocks forever. The fix releases s.mu on that path (defer s.mu.Unlock()).
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

type Exit struct {
	Timestamp time.Time
	Pid       int
	Status    int
}

type process struct {
	id  string
	pid int
}

func (p *process) SetExited(status int) {}

// Container is runc.Container reduced to the pid bookkeeping used here.
type Container struct {
	ID        string
	mu        sync.Mutex
	processes map[string]*process
}

func (c *Container) All() []*process {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*process
	for _, p := range c.processes {
		out = append(out, p)
	}
	return out
}

type ShutdownRequest struct{ ID string }
type StateRequest struct{ ID string }
type StateResponse struct {
	ID     string
	Status string
}
type Empty struct{}

var empty = &Empty{}

type service struct {
	mu      sync.Mutex
	context context.Context
	events  chan interface{}
	ec      chan Exit

	id         string
	containers map[string]*Container
	cancel     func()
}

func newService(id string) *service {
	ctx, cancel := context.WithCancel(context.Background())
	s := &service{context: ctx, events: make(chan interface{}, 128), ec: make(chan Exit, 32), id: id, containers: map[string]*Container{}, cancel: cancel}
	go s.processExits()
	go s.forward()
	return s
}

func (s *service) forward() {
	for e := range s.events {
		_ = e // publisher.Publish(ctx, getTopic(e), e)
	}
}

func (s *service) processExits() {
	for e := range s.ec {
		s.checkProcesses(e)
	}
}

func (s *service) checkProcesses(e Exit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, container := range s.containers {
		for _, p := range container.All() {
			if p.pid == e.Pid {
				p.SetExited(e.Status)
				s.events <- fmt.Sprintf("TaskExit %s %d", container.ID, e.Pid)
			}
		}
	}
}

func (s *service) getContainer(id string) (*Container, error) {
	s.mu.Lock()
	container := s.containers[id]
	s.mu.Unlock()
	if container == nil {
		return nil, errors.New("container not created: not found")
	}
	return container, nil
}

// State returns runtime state information for a process.
func (s *service) State(ctx context.Context, r *StateRequest) (*StateResponse, error) {
	container, err := s.getContainer(r.ID)
	if err != nil {
		return nil, err
	}
	return &StateResponse{ID: container.ID, Status: "running"}, nil
}

func (s *service) Shutdown(ctx context.Context, r *ShutdownRequest) (*Empty, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// return out if the shim is still servicing containers
	if len(s.containers) > 0 {
		return empty, nil
	}
	s.cancel()
	close(s.events)
	return empty, nil
}

func main() {
	ctx := context.Background()
	s := newService("sandbox-1")
	// The task was already deleted, so the shim serves no container.
	if _, err := s.Shutdown(ctx, &ShutdownRequest{ID: s.id}); err != nil {
		panic(err)
	}
	// A reparented child reaped after shutdown, and a State request that was
	// already being served on another ttrpc stream.
	s.ec <- Exit{Timestamp: time.Now(), Pid: 4242, Status: 137}
	if _, err := s.State(ctx, &StateRequest{ID: "sandbox-1"}); err != nil {
		fmt.Println("state:", err)
	}
	fmt.Println("shim shut down cleanly")
}
