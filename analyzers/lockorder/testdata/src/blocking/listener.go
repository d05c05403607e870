package blocking

import (
	"errors"
	"net"
	"sync"
	"time"
)

// A listener's Accept waits for a connection or for the listener's Close:
// a server stopping while no client connects is unblocked by the Close
// only. Held across Accept, a lock the closing goroutine takes first
// deadlocks the stop (thrift's TServerSocket accepting under its read
// lock, Interrupt write-locking to close). The close here runs in a
// sync.Once's function: what that function does on channels is the
// caller's too.

var errInterrupted = errors.New("interrupted")

type ServerSocket struct {
	mu          sync.RWMutex
	listener    net.Listener
	interrupted bool
}

func (p *ServerSocket) Accept() (net.Conn, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.interrupted {
		return nil, errInterrupted
	}
	return p.listener.Accept() // want `ServerSocket.mu \(taken at listener.go:\d+\) is held across a listener's Accept; the goroutine started by the go statement, which would unblock it, also takes ServerSocket.mu \[blocking-held\]`
}

func (p *ServerSocket) Interrupt() {
	p.mu.Lock()
	p.interrupted = true
	p.listener.Close()
	p.mu.Unlock()
}

type SocketServer struct {
	sock     *ServerSocket
	stopOnce sync.Once
}

func (s *SocketServer) Serve() {
	for {
		c, err := s.sock.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}

func (s *SocketServer) Stop() { s.stopOnce.Do(func() { s.sock.Interrupt() }) }

func (s *SocketServer) StopAfter(d time.Duration) {
	go func() {
		time.Sleep(d)
		s.Stop()
	}()
}

// FixedSocket reads its listener under the read lock and accepts after
// letting it go. Silent.
type FixedSocket struct {
	mu          sync.RWMutex
	listener    net.Listener
	interrupted bool
}

func (p *FixedSocket) Accept() (net.Conn, error) {
	p.mu.RLock()
	l, interrupted := p.listener, p.interrupted
	p.mu.RUnlock()
	if interrupted {
		return nil, errInterrupted
	}
	return l.Accept()
}

func (p *FixedSocket) Interrupt() {
	p.mu.Lock()
	p.interrupted = true
	p.listener.Close()
	p.mu.Unlock()
}

type FixedServer struct{ sock *FixedSocket }

func (s *FixedServer) Serve() {
	for {
		c, err := s.sock.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}

func (s *FixedServer) StopAfter(d time.Duration) {
	go func() {
		time.Sleep(d)
		s.sock.Interrupt()
	}()
}
