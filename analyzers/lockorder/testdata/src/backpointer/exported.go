package backpointer

import "sync"

// The same shape with the types in a library file: another package may
// set Agent.Server to any server, so a.Server is not known to be the
// server holding the agent. Silent.
type Agent struct{ Server *Server }

type Server struct {
	mu    sync.RWMutex
	name  string
	agent *Agent
}

func (a *Agent) status() string { return a.Server.Name() }

func (s *Server) Name() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.name
}

func (s *Server) Status() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.agent.status()
}

func (s *Server) Rename(n string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.name = n
}

func NewServer() *Server {
	s := &Server{}
	s.agent = &Agent{Server: s}
	return s
}
