package wrong

type Server struct {
	requests chan int
	// example:start

	pending int // want `Server\.pending: add //confined:control \(rank \d of 2\): 1 of 2 accesses \(1 of 1 writes\) run on Server\.loop's goroutine only; 1 deviant: s\.pending read in Server\.Pending \(whose callers are unknown\) \(wrong\.go:\d+\) \[suggest-control\]`
	// example:end
}

func NewServer() *Server {
	s := &Server{requests: make(chan int)}
	go s.loop()
	return s
}

func (s *Server) loop() { // want `Server\.loop: add //confined:entry \(rank \d of 2\): its loop receives from s\.requests and its goroutine owns Server\.pending \[suggest-entry\]`
	for range s.requests {
		s.pending++
	}
}

// example:start

func (s *Server) Pending() int { return s.pending }

// example:end
