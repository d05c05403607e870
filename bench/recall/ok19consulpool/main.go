// Modelled on Consul's agent/router server manager (manager.go): a
// package-level StdLogger is used while the manager lock is held, but only
// immutable fields are logged there; the Server value, whose String method
// takes the server's own lock, is logged after the manager lock is released.

package main

import (
	"fmt"
	"io"
	"log"
	"os"
	"sync"
	"sync/atomic"
)

type StdLogger interface {
	Printf(format string, v ...any)
	Println(v ...any)
}

var Logger StdLogger = log.New(os.Stderr, "[router] ", log.LstdFlags)

type Server struct {
	ID         string // immutable
	Datacenter string // immutable

	mu      sync.Mutex
	addr    string
	healthy bool
}

func (s *Server) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("%s (%s, dc=%s, healthy=%t)", s.ID, s.addr, s.Datacenter, s.healthy)
}

func (s *Server) SetAddr(addr string) {
	s.mu.Lock()
	s.addr = addr
	s.mu.Unlock()
}

type Manager struct {
	mu      sync.Mutex
	servers []*Server
	offset  int
	rebals  atomic.Int64
}

func (m *Manager) AddServer(s *Server) {
	m.mu.Lock()
	m.servers = append(m.servers, s)
	n := len(m.servers)
	Logger.Printf("adding server %s, pool size %d", s.ID, n)
	m.mu.Unlock()
	Logger.Println("added", s)
}

func (m *Manager) FindServer() *Server {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.servers) == 0 {
		Logger.Println("no servers available")
		return nil
	}
	s := m.servers[m.offset%len(m.servers)]
	m.offset++
	return s
}

func (m *Manager) NotifyFailedServer(s *Server) {
	s.mu.Lock()
	s.healthy = false
	s.mu.Unlock()

	m.mu.Lock()
	for i, cur := range m.servers {
		if cur == s && len(m.servers) > 1 {
			m.servers = append(append([]*Server{}, m.servers[:i]...), m.servers[i+1:]...)
			m.servers = append(m.servers, s)
			Logger.Printf("cycled failed server %s to end of list", cur.ID)
			break
		}
	}
	m.rebals.Add(1)
	m.mu.Unlock()
	Logger.Printf("failed server: %v", s)
}

func main() {
	if os.Getenv("CONSUL_VERBOSE") == "" {
		Logger = log.New(io.Discard, "[router] ", 0)
	}
	m := &Manager{}
	for i := 0; i < 3; i++ {
		m.AddServer(&Server{ID: fmt.Sprintf("srv-%d", i), Datacenter: "dc1", addr: fmt.Sprintf("10.0.1.%d:8300", i), healthy: true})
	}

	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 60; i++ {
				s := m.FindServer()
				if s == nil {
					continue
				}
				if (i+w)%7 == 0 {
					m.NotifyFailedServer(s)
				}
				if i%11 == 0 {
					s.SetAddr(fmt.Sprintf("10.0.2.%d:8300", i))
				}
			}
		}(w)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 3; i < 6; i++ {
			m.AddServer(&Server{ID: fmt.Sprintf("srv-%d", i), Datacenter: "dc2", addr: "10.0.3.1:8300", healthy: true})
		}
	}()
	wg.Wait()
	fmt.Printf("rebalances=%d first=%v\n", m.rebals.Load(), m.FindServer())
}
