package right

import "sync"

type Server struct {
	mu       sync.Mutex
	seq      int
	requests chan int
}

func (s *Server) Start() { go s.worker() }

// worker takes s.mu before each receive.
func (s *Server) worker() {
	for {
		s.mu.Lock()
		s.seq--
		s.mu.Unlock()
		<-s.requests
	}
}

func (s *Server) Submit() {
	// example:start

	s.mu.Lock()
	s.seq++
	req := s.seq
	s.mu.Unlock()
	s.requests <- req
	// example:end
}
