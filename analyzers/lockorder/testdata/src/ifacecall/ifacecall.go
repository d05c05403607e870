package ifacecall

import "sync"

type Handler interface{ Handle() }

type Table struct {
	mu sync.Mutex
}

func (t *Table) Handle() {
	t.mu.Lock()
	t.mu.Unlock()
}

type Server struct {
	mu sync.Mutex
	h  Handler
	t  *Table
}

func (s *Server) dispatch() {
	s.mu.Lock()
	s.h.Handle()
	s.mu.Unlock()
}

func (s *Server) sweep() {
	s.t.mu.Lock()
	s.mu.Lock() // want `lock order inversion: Server.mu then Table.mu in Server.dispatch \(ifacecall.go:23 -> ifacecall.go:24 via Table.Handle\) but Table.mu then Server.mu in Server.sweep \(ifacecall.go:29 -> ifacecall.go:30\) \[lock-order\]`
	s.mu.Unlock()
	s.t.mu.Unlock()
}
