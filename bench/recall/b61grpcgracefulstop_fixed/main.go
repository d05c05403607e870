// Project: grpc/grpc-go, v1.0.x (mid 2016).
// Files/functions: server.go: Server.GracefulStop, Server.Stop, Server.addConn,
// Server.removeConn, Server.serveStreams; transport.ServerTransport.Drain.
// Fixed twin. Issue: grpc/grpc-go#793, fixed by grpc/grpc-go#795
// "Fix deadlock when GracefulStop()ing multiple times".
//
// GracefulStop takes s.mu, closes the listeners, asks every transport to
// drain and then waits on s.cv (a Cond on s.mu) until all connections have
// been removed; at the end it sets s.conns to nil and unlocks. Its first
// statement after locking is an early exit for a server that is already
// draining or stopped (s.drain || s.conns == nil), and that return did not
// unlock s.mu. The first GracefulStop therefore works, but a second one (two
// shutdown paths, a signal handler and a drain command, is enough) returns
// with the server mutex held, and the Stop that follows, like anything else
// that touches s.mu, blocks forever. The fix unlocks through defer.
package main

import (
	"fmt"
	"sync"
	"time"
)

type Listener interface{ Close() error }

type ServerTransport interface {
	Drain()
	Close() error
}

type fakeListener struct{ addr string }

func (l *fakeListener) Close() error { return nil }

type http2Server struct {
	drainc chan struct{}
	once   sync.Once
}

func (t *http2Server) Drain()       { t.once.Do(func() { close(t.drainc) }) }
func (t *http2Server) Close() error { t.Drain(); return nil }

type Server struct {
	mu    sync.Mutex // guards following
	lis   map[Listener]bool
	conns map[ServerTransport]bool
	drain bool
	// A CondVar to let GracefulStop() blocks until all the pending RPCs are
	// finished and all the transport goes away.
	cv *sync.Cond
}

func NewServer() *Server {
	s := &Server{
		lis:   make(map[Listener]bool),
		conns: make(map[ServerTransport]bool),
	}
	s.cv = sync.NewCond(&s.mu)
	return s
}

func (s *Server) addListener(l Listener) {
	s.mu.Lock()
	s.lis[l] = true
	s.mu.Unlock()
}

func (s *Server) addConn(st ServerTransport) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns == nil || s.drain {
		return false
	}
	s.conns[st] = true
	return true
}

func (s *Server) removeConn(st ServerTransport) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns != nil {
		delete(s.conns, st)
		s.cv.Broadcast()
	}
}

// serveStreams handles the RPCs of one transport until it is drained and the
// in-flight streams have finished.
func (s *Server) serveStreams(st *http2Server, inflight time.Duration) {
	defer s.removeConn(st)
	<-st.drainc
	time.Sleep(inflight)
}

// Stop stops the gRPC server. It immediately closes all open connections and
// listeners.
func (s *Server) Stop() {
	s.mu.Lock()
	listeners := s.lis
	s.lis = nil
	cs := s.conns
	s.conns = nil
	// interrupt GracefulStop if Stop and GracefulStop are called concurrently.
	s.cv.Broadcast()
	s.mu.Unlock()

	for lis := range listeners {
		lis.Close()
	}
	for c := range cs {
		c.Close()
	}
}

// GracefulStop stops the gRPC server gracefully. It stops the server to
// accept new connections and RPCs and blocks until all the pending RPCs are
// finished.
func (s *Server) GracefulStop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.drain || s.conns == nil {
		return
	}
	s.drain = true
	for lis := range s.lis {
		lis.Close()
	}
	s.lis = nil
	for c := range s.conns {
		c.Drain()
	}
	for len(s.conns) != 0 {
		s.cv.Wait()
	}
	s.conns = nil
}

// node is the embedding application: a drain command and the process
// shutdown both stop the RPC server.
type node struct{ grpc *Server }

func (n *node) drain()    { n.grpc.GracefulStop() }
func (n *node) shutdown() { n.grpc.GracefulStop(); n.grpc.Stop() }

func main() {
	s := NewServer()
	s.addListener(&fakeListener{addr: ":26257"})
	st := &http2Server{drainc: make(chan struct{})}
	if s.addConn(st) {
		go s.serveStreams(st, 20*time.Millisecond)
	}
	n := &node{grpc: s}
	n.drain()
	fmt.Println("drained")
	n.shutdown()
	fmt.Println("stopped")
}
