// Project: grpc-go (server.go)
// Bug: Server.Serve returns ErrServerStopped when it is called after Stop
// (s.lis == nil) without releasing s.mu, so any later Stop/GracefulStop or
// GetServiceInfo call on the server blocks forever.
// Fix: unlock s.mu on the early-return path before closing the listener.
package main

import (
	"errors"
	"fmt"
	"log"
	"net"
	"sync"
)

var ErrServerStopped = errors.New("grpc: the server has been stopped")

type ServiceInfo struct {
	Methods  []string
	Metadata any
}

type serviceInfo struct {
	serviceImpl any
	methods     map[string]bool
}

type ServerTransport interface {
	Close() error
	Drain()
}

type Event struct {
	fired chan struct{}
	o     sync.Once
}

func NewEvent() *Event                 { return &Event{fired: make(chan struct{})} }
func (e *Event) Fire()                 { e.o.Do(func() { close(e.fired) }) }
func (e *Event) Done() <-chan struct{} { return e.fired }
func (e *Event) HasFired() bool {
	select {
	case <-e.fired:
		return true
	default:
		return false
	}
}

type Server struct {
	mu       sync.Mutex
	lis      map[net.Listener]bool
	conns    map[string]map[ServerTransport]bool
	serve    bool
	drain    bool
	cv       *sync.Cond
	services map[string]*serviceInfo
	events   []string

	quit    *Event
	done    *Event
	serveWG sync.WaitGroup
}

func NewServer() *Server {
	s := &Server{
		lis:      make(map[net.Listener]bool),
		conns:    make(map[string]map[ServerTransport]bool),
		services: make(map[string]*serviceInfo),
		quit:     NewEvent(),
		done:     NewEvent(),
	}
	s.cv = sync.NewCond(&s.mu)
	return s
}

func (s *Server) printf(format string, a ...any) {
	if s.events != nil {
		s.events = append(s.events, fmt.Sprintf(format, a...))
	}
}

func (s *Server) RegisterService(name string, impl any, methods ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	info := &serviceInfo{serviceImpl: impl, methods: make(map[string]bool)}
	for _, m := range methods {
		info.methods[m] = true
	}
	s.services[name] = info
}

func (s *Server) GetServiceInfo() map[string]ServiceInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	ret := make(map[string]ServiceInfo)
	for n, srv := range s.services {
		var methods []string
		for m := range srv.methods {
			methods = append(methods, m)
		}
		ret[n] = ServiceInfo{Methods: methods}
	}
	return ret
}

func (s *Server) Serve(lis net.Listener) error {
	s.mu.Lock()
	s.printf("serving")
	s.serve = true
	if s.lis == nil {
		// Serve called after Stop or GracefulStop.
		s.mu.Unlock()
		lis.Close()
		return ErrServerStopped
	}
	s.serveWG.Add(1)
	defer func() {
		s.serveWG.Done()
		if s.quit.HasFired() {
			<-s.done.Done()
		}
	}()
	s.lis[lis] = true
	s.mu.Unlock()

	for {
		rawConn, err := lis.Accept()
		if err != nil {
			if s.quit.HasFired() {
				return nil
			}
			return err
		}
		rawConn.Close()
	}
}

func (s *Server) Stop() {
	s.quit.Fire()
	defer func() {
		s.serveWG.Wait()
		s.done.Fire()
	}()

	s.mu.Lock()
	listeners := s.lis
	s.lis = nil
	conns := s.conns
	s.conns = nil
	s.cv.Broadcast()
	s.mu.Unlock()

	for lis := range listeners {
		lis.Close()
	}
	for _, cs := range conns {
		for st := range cs {
			st.Close()
		}
	}

	s.mu.Lock()
	s.events = nil
	s.mu.Unlock()
}

type healthServer struct{}

func main() {
	s := NewServer()
	s.RegisterService("grpc.health.v1.Health", &healthServer{}, "Check", "Watch")

	// Shutdown signal arrives before the serving goroutine got to Serve.
	s.Stop()

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	if err := s.Serve(lis); err != nil {
		log.Printf("grpc: Serve returned: %v", err)
	}

	// Deferred cleanup in the caller and the admin/reflection service.
	s.Stop()
	fmt.Println("services:", len(s.GetServiceInfo()))
}
