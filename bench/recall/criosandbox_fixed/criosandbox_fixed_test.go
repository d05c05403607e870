// Project: cri-o/cri-o (internal/lib/sandbox + server container removal).
// Bug (approximate): Sandbox.RemoveContainer held the sandbox lock while it
// ran the registered container-removed hooks; the server's hook
// (Server.onContainerRemoved -> updateSandboxState) calls sb.Containers(),
// which takes the same non-reentrant sandbox mutex: double lock via callback.
// Fix: RemoveContainer copies the hooks and invokes them after unlocking.
package criosandbox_fixed

import (
	"errors"
	"sync"
	"testing"
)

type Container struct {
	id        string
	name      string
	sandboxID string
	state     string
}

type RemoveHook func(sb *Sandbox, c *Container)

type Sandbox struct {
	mu         sync.Mutex
	id         string
	infra      *Container
	containers map[string]*Container
	onRemove   []RemoveHook
}

func NewSandbox(id string) *Sandbox {
	return &Sandbox{id: id, containers: map[string]*Container{}}
}

func (s *Sandbox) RegisterRemoveHook(h RemoveHook) {
	s.mu.Lock()
	s.onRemove = append(s.onRemove, h)
	s.mu.Unlock()
}

func (s *Sandbox) AddContainer(c *Container) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.containers[c.id] = c
}

func (s *Sandbox) Containers() []*Container {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Container, 0, len(s.containers))
	for _, c := range s.containers {
		out = append(out, c)
	}
	return out
}

// RemoveContainer removes c from the sandbox and notifies listeners.
func (s *Sandbox) RemoveContainer(c *Container) {
	s.mu.Lock()
	delete(s.containers, c.id)
	hooks := append([]RemoveHook(nil), s.onRemove...)
	s.mu.Unlock()
	for _, h := range hooks {
		h(s, c) // FIX: hooks run after s.mu is released
	}
}

type Server struct {
	mu         sync.Mutex
	sandboxes  map[string]*Sandbox
	containers map[string]*Container
	emptyPods  map[string]bool
}

func (srv *Server) addSandbox(sb *Sandbox) {
	srv.sandboxes[sb.id] = sb
	sb.RegisterRemoveHook(srv.onContainerRemoved)
}

func (srv *Server) onContainerRemoved(sb *Sandbox, c *Container) {
	srv.updateSandboxState(sb)
}

func (srv *Server) updateSandboxState(sb *Sandbox) {
	remaining := len(sb.Containers())
	srv.mu.Lock()
	srv.emptyPods[sb.id] = remaining == 0
	srv.mu.Unlock()
}

func (srv *Server) lookup(id string) (*Sandbox, *Container, error) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	c, ok := srv.containers[id]
	if !ok {
		return nil, nil, errors.New("container not found: " + id)
	}
	return srv.sandboxes[c.sandboxID], c, nil
}

// RemoveContainer implements the CRI RemoveContainer RPC.
func (srv *Server) RemoveContainer(id string) error {
	sb, c, err := srv.lookup(id)
	if err != nil {
		return err
	}
	c.state = "removed"
	sb.RemoveContainer(c)
	srv.mu.Lock()
	delete(srv.containers, id)
	srv.mu.Unlock()
	return nil
}

func TestRemoveContainers(t *testing.T) {
	srv := &Server{
		sandboxes:  map[string]*Sandbox{},
		containers: map[string]*Container{},
		emptyPods:  map[string]bool{},
	}
	sb := NewSandbox("pod1")
	srv.addSandbox(sb)
	for _, id := range []string{"ctr1", "ctr2"} {
		c := &Container{id: id, name: id, sandboxID: "pod1", state: "exited"}
		sb.AddContainer(c)
		srv.containers[id] = c
	}

	var wg sync.WaitGroup
	for _, id := range []string{"ctr1", "ctr2"} {
		wg.Add(1)
		go func(id string) {
			defer wg.Done()
			if err := srv.RemoveContainer(id); err != nil {
				t.Errorf("remove %s: %v", id, err)
			}
		}(id)
	}
	wg.Wait()
}
