// Project: containers/podman (libpod/runtime_ctr.go, removeContainer).
// Bug (approximate): when removing a container that belongs to a pod,
// removeContainer locked the pod and then synced it with pod.updatePod(); if
// that failed (e.g. a transient database error) it returned without unlocking
// the pod lock, so the next operation on the pod (another container removal,
// `podman pod ps`) hung forever on pod.lock.
// Fix: defer pod.lock.Unlock() immediately after pod.lock.Lock().
package podmanpodlock

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// Locker is libpod's lock.Locker (SHM-backed in production).
type Locker interface {
	ID() uint32
	Lock()
	Unlock()
}

type inMemoryLock struct {
	id uint32
	mu sync.Mutex
}

func (l *inMemoryLock) ID() uint32 { return l.id }
func (l *inMemoryLock) Lock()      { l.mu.Lock() }
func (l *inMemoryLock) Unlock()    { l.mu.Unlock() }

var ErrNoSuchCtr = errors.New("no such container")

type State struct {
	mu       sync.Mutex
	pods     map[string]*Pod
	ctrs     map[string]*Container
	failNext error
}

func (s *State) Pod(id string) (*Pod, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pods[id]
	if !ok {
		return nil, errors.New("no such pod")
	}
	return p, nil
}

func (s *State) UpdatePod(p *Pod) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failNext; err != nil {
		s.failNext = nil
		return err
	}
	return nil
}

func (s *State) RemoveContainer(c *Container) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.ctrs[c.id]; !ok {
		return ErrNoSuchCtr
	}
	delete(s.ctrs, c.id)
	return nil
}

type Pod struct {
	id      string
	lock    Locker
	runtime *Runtime
}

func (p *Pod) updatePod() error { return p.runtime.state.UpdatePod(p) }

type Container struct {
	id    string
	podID string
	lock  Locker
	state string
}

func (c *Container) syncContainer() error { return nil }

type Runtime struct {
	state *State
}

func (r *Runtime) RemoveContainer(c *Container, force bool) error {
	return r.removeContainer(c, force)
}

func (r *Runtime) removeContainer(c *Container, force bool) error {
	if c.podID != "" {
		pod, err := r.state.Pod(c.podID)
		if err != nil {
			return err
		}
		pod.lock.Lock()
		if err := pod.updatePod(); err != nil {
			return err // BUG: pod.lock is never released on this path
		}
		defer pod.lock.Unlock()
	}
	c.lock.Lock()
	defer c.lock.Unlock()
	if err := c.syncContainer(); err != nil {
		return err
	}
	if c.state == "running" && !force {
		return errors.New("cannot remove running container " + c.id)
	}
	return r.state.RemoveContainer(c)
}

func TestRemovePodContainers(t *testing.T) {
	r := &Runtime{state: &State{pods: map[string]*Pod{}, ctrs: map[string]*Container{}}}
	pod := &Pod{id: "pod1", lock: &inMemoryLock{id: 1}, runtime: r}
	r.state.pods[pod.id] = pod
	c1 := &Container{id: "c1", podID: "pod1", lock: &inMemoryLock{id: 2}, state: "exited"}
	c2 := &Container{id: "c2", podID: "pod1", lock: &inMemoryLock{id: 3}, state: "exited"}
	r.state.ctrs[c1.id], r.state.ctrs[c2.id] = c1, c2
	r.state.failNext = errors.New("database is locked")

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := r.RemoveContainer(c1, false); err != nil {
			t.Logf("podman rm c1: %v", err)
		}
	}()
	go func() {
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		if err := r.RemoveContainer(c2, false); err != nil {
			t.Errorf("podman rm c2: %v", err)
		}
	}()
	wg.Wait()
}
