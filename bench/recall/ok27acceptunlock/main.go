package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"sync"
)

var errServerClosed = errors.New("server closed")

type Server struct {
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

func NewServer(ln net.Listener) *Server {
	return &Server{ln: ln, conns: make(map[net.Conn]struct{})}
}

// Serve reads the listener under the lock but calls Accept after unlocking,
// so Close can always acquire s.mu and close the listener.
func (s *Server) Serve() error {
	for {
		s.mu.Lock()
		ln := s.ln
		s.mu.Unlock()
		if ln == nil {
			return errServerClosed
		}
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return errServerClosed
			}
			return err
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return errServerClosed
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.handle(c)
	}
}

func (s *Server) handle(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
	}()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		if _, err := c.Write([]byte("echo: " + line)); err != nil {
			return
		}
	}
}

// Close takes the lock, closes the listener and live connections, then
// waits for handlers after unlocking.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	err := s.ln.Close()
	s.ln = nil
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		return
	}
	srv := NewServer(ln)
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve() }()

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		fmt.Println("dial:", err)
		return
	}
	fmt.Fprintf(c, "hello\n")
	reply, _ := bufio.NewReader(c).ReadString('\n')
	fmt.Print(reply)

	srv.Close()
	fmt.Println("serve returned:", <-serveErr)
	c.Close()
}
