// Project: grpc-go (server.go), mid-2016 (after GracefulStop was added)
// Issue: grpc/grpc-go#793, fixed by PR #795 "Fix deadlock when GracefulStop()ing multiple times"
//
// Server.GracefulStop takes s.mu (line 106) and, if the server is already draining
// or already stopped, returns (line 108) without unlocking; only the normal path
// unlocks at the end (line 122). A first GracefulStop sets s.drain, drains the
// transports and parks in s.cv.Wait (line 119), which lets s.mu go. A second,
// concurrent GracefulStop then returns with s.mu held. The draining transport's
// handler goroutine finishes and calls removeConn, which blocks on s.mu
// (line 75); the first GracefulStop can neither be signalled nor re-acquire s.mu
// to leave cv.Wait. main() starts the first GracefulStop, calls the second one and
// waits for the first.
package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// ServerTransport is the server side of one HTTP/2 connection.
type ServerTransport interface {
	io.Closer
	Drain()
}

type http2Server struct {
	remote  string
	onDrain func()
}

// Drain sends a GOAWAY; the connection goes away once its in-flight RPCs end.
func (t *http2Server) Drain() { go t.onDrain() }

func (t *http2Server) Close() error { return nil }

// Listener is the subset of net.Listener the server uses.
type Listener interface{ Close() error }

type fakeListener struct{}

func (fakeListener) Close() error { return nil }

type Server struct {
	mu    sync.Mutex // guards following
	lis   map[Listener]bool
	conns map[io.Closer]bool
	drain bool
	// A CondVar to let GracefulStop() blocks until all the pending RPCs are finished
	// and all the transport goes away.
	cv *sync.Cond
}

func NewServer() *Server {
	s := &Server{
		lis:   make(map[Listener]bool),
		conns: make(map[io.Closer]bool),
	}
	s.cv = sync.NewCond(&s.mu)
	return s
}

func (s *Server) addConn(c io.Closer) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns == nil || s.drain {
		return false
	}
	s.conns[c] = true
	return true
}

func (s *Server) removeConn(c io.Closer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns != nil {
		delete(s.conns, c)
		s.cv.Signal()
	}
}

// Stop stops the gRPC server. It immediately closes all open
// connections and listeners.
func (s *Server) Stop() {
	s.mu.Lock()
	listeners := s.lis
	s.lis = nil
	cs := s.conns
	s.conns = nil
	// interrupt GracefulStop if Stop and GracefulStop are called concurrently.
	s.cv.Signal()
	s.mu.Unlock()

	for lis := range listeners {
		lis.Close()
	}
	for c := range cs {
		c.Close()
	}
}

// GracefulStop stops the gRPC server gracefully. It stops the server to accept new
// connections and RPCs and blocks until all the pending RPCs are finished.
func (s *Server) GracefulStop() {
	s.mu.Lock()
	if s.drain || s.conns == nil {
		return
	}
	s.drain = true
	for lis := range s.lis {
		lis.Close()
	}
	s.lis = nil
	for c := range s.conns {
		c.(ServerTransport).Drain()
	}
	for len(s.conns) != 0 {
		s.cv.Wait()
	}
	s.conns = nil
	s.mu.Unlock()
}

func main() {
	s := NewServer()
	s.lis[fakeListener{}] = true

	st := &http2Server{remote: "10.0.0.7:51234"}
	st.onDrain = func() {
		// The last in-flight RPC on this connection takes a while to finish.
		time.Sleep(50 * time.Millisecond)
		s.removeConn(st)
	}
	s.addConn(st)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.GracefulStop() // first caller: the signal handler
	}()

	// A second component shuts the server down too, while the first call drains.
	time.Sleep(10 * time.Millisecond)
	s.GracefulStop()

	wg.Wait()
	fmt.Println("server stopped")
}
