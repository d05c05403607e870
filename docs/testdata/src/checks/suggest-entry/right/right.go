package right

import "github.com/confinelint/confinelint/confine"

type Server struct {
	owner    confine.Owner //confined:control
	requests chan int
	asks     chan chan int
	pending  int //confined:control
}

func NewServer() *Server {
	s := &Server{requests: make(chan int), asks: make(chan chan int)}
	go s.loop()
	return s
}

// example:start

//confined:entry
func (s *Server) loop() {
	s.owner.Bind()
	for {
		select {
		case <-s.requests:
			s.pending++
		case reply := <-s.asks:
			reply <- s.pending
		}
	}
}

// example:end

func (s *Server) Pending() int {
	reply := make(chan int)
	s.asks <- reply
	return <-reply
}
