package wrong

type Server struct {
	requests chan int
	pending  int // want `Server\.pending: add //confined:control \(rank \d of 2\): .* \[suggest-control\]`
}

func NewServer() *Server {
	s := &Server{requests: make(chan int)}
	go s.loop()
	return s
}

// example:start

func (s *Server) loop() { // want `Server\.loop: add //confined:entry \(rank \d of 2\): its loop receives from s\.requests and its goroutine owns Server\.pending \[suggest-entry\]`
	for range s.requests {
		s.pending++
	}
}

// example:end

func (s *Server) Pending() int { return s.pending }
