// Pattern: a getter has a lock-free fast path that returns a cached value and
// only takes the mutex to build the value when the cache is empty. A caller
// that holds the mutex always publishes the value before calling the getter,
// so the getter's locking slow path is unreachable from it.
// Modelled on Caddy/tailscale style lazily-built TLS configs (atomic pointer
// + double-checked locking) that are rebuilt on reload.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

type TLSConfig struct {
	Version int
	Certs   []string
}

type listener struct {
	name string
	cfg  *TLSConfig // guarded by Server.mu
}

type Server struct {
	mu        sync.Mutex
	certs     []string
	version   int
	listeners []*listener
	// cfg is only ever stored while holding mu, and is never reset to nil
	// once set.
	cfg atomic.Pointer[TLSConfig]
}

func (s *Server) buildLocked() *TLSConfig {
	s.version++
	return &TLSConfig{Version: s.version, Certs: append([]string(nil), s.certs...)}
}

// tlsConfig returns the current config. Fast path: no locking when present.
func (s *Server) tlsConfig() *TLSConfig {
	if c := s.cfg.Load(); c != nil {
		return c
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.cfg.Load(); c != nil {
		return c
	}
	c := s.buildLocked()
	s.cfg.Store(c)
	return c
}

// Reload holds s.mu, publishes the new config FIRST, and only then calls
// tlsConfig (via applyLocked). Since cfg is non-nil and nobody can reset it,
// tlsConfig takes the fast path and never touches s.mu here.
func (s *Server) Reload(cert string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.certs = append(s.certs, cert)
	s.cfg.Store(s.buildLocked())
	s.applyLocked()
}

func (s *Server) applyLocked() {
	for _, l := range s.listeners {
		l.cfg = s.tlsConfig()
	}
}

func (s *Server) AddListener(name string) {
	cfg := s.tlsConfig() // may take s.mu on the slow path: not held here
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur := s.cfg.Load(); cur.Version > cfg.Version {
		cfg = cur
	}
	s.listeners = append(s.listeners, &listener{name: name, cfg: cfg})
}

func (s *Server) Versions() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var vs []int
	for _, l := range s.listeners {
		vs = append(vs, l.cfg.Version)
	}
	return vs
}

func main() {
	s := &Server{certs: []string{"initial.pem"}}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 5; j++ {
				s.AddListener(fmt.Sprintf(":%d", 8000+i*10+j))
				_ = s.tlsConfig().Certs
			}
		}(i)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for j := 0; j < 20; j++ {
			s.Reload(fmt.Sprintf("cert%d.pem", j))
		}
	}()
	wg.Wait()
	s.Reload("final.pem")
	fmt.Println("listener versions:", s.Versions())
}
