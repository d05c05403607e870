package main

import "sync"

type server struct {
	mu    sync.Mutex
	reqs  chan int
	count int
}

func (s *server) loop() {
	for r := range s.reqs {
		s.mu.Lock()
		s.count += r
		s.mu.Unlock()
	}
}

func (s *server) submit(r int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs <- r
}

func main() {
	s := &server{reqs: make(chan int)}
	go s.loop()
	s.submit(1)
	s.submit(2)
}
