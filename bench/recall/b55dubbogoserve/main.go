// Project: apache/dubbo-go v3.3 (new server API).
// Files/functions: server/server.go (Server.Serve, exportServices, exportInternalServices,
// registerServiceOptions, GetServiceOptionsByInterfaceName), server/action.go (ServiceOptions.Export),
// protocol/triple (the triple handler that resolves a service by interface name per request).
// Issue apache/dubbo-go#3237 "[BUG] server/server.go 中的锁永远不会被释放" (the lock in
// server.go is never released), fixed by PR #3238 "fix: release the lock in advance in case
// causing deadlock" (March 2026).
//
// Serve takes s.mu, marks the server as serving, exports the user services and the internal
// (metadata) services, registers the service instance, and then parks the calling goroutine in
// select {} to keep the process alive. The unlock was a deferred s.mu.Unlock(), which can never
// run because Serve never returns, so the server mutex stays held for the life of the process.
// Every later path that needs the server's registry blocks on it: the triple protocol's request
// handler looking a service up with GetServiceOptionsByInterfaceName, or a late Register that
// goes through registerServiceOptions. The fix unlocks s.mu before the select {}.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type ServiceInfo struct {
	InterfaceName string
	Methods       []string
}

type ServiceOptions struct {
	Id       string
	info     *ServiceInfo
	handler  any
	exported bool
}

func (svcOpts *ServiceOptions) Export() error {
	svcOpts.exported = true
	fmt.Printf("exported %s (%d methods)\n", svcOpts.Id, len(svcOpts.info.Methods))
	return nil
}

type ServerOptions struct{ AppName string }

type Server struct {
	cfg *ServerOptions

	mu                    sync.RWMutex
	svcOptsMap            sync.Map
	interfaceNameServices map[string]*ServiceOptions
	serve                 bool
}

func NewServer(cfg *ServerOptions) *Server {
	return &Server{cfg: cfg, interfaceNameServices: make(map[string]*ServiceOptions)}
}

func (s *Server) Register(handler any, info *ServiceInfo) error {
	svcOpts := &ServiceOptions{Id: info.InterfaceName, info: info, handler: handler}
	s.registerServiceOptions(svcOpts)
	return nil
}

func (s *Server) registerServiceOptions(serviceOptions *ServiceOptions) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.svcOptsMap.Store(serviceOptions, serviceOptions.info)
	s.interfaceNameServices[serviceOptions.Id] = serviceOptions
}

func (s *Server) GetServiceOptionsByInterfaceName(name string) *ServiceOptions {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.interfaceNameServices[name]
}

func (s *Server) exportServices() (err error) {
	s.svcOptsMap.Range(func(key, value any) bool {
		if err = key.(*ServiceOptions).Export(); err != nil {
			return false
		}
		return true
	})
	return err
}

func (s *Server) exportInternalServices() error {
	metadata := &ServiceOptions{Id: "org.apache.dubbo.metadata.MetadataService",
		info: &ServiceInfo{InterfaceName: "org.apache.dubbo.metadata.MetadataService", Methods: []string{"getMetadataInfo"}}}
	return metadata.Export()
}

func registerServiceInstance(appName string) error {
	fmt.Printf("registered service instance of %s\n", appName)
	return nil
}

func (s *Server) Serve() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.serve {
		return errors.New("server has already been started")
	}
	// prevent multiple calls to Serve
	s.serve = true
	if err := s.exportServices(); err != nil {
		return err
	}
	if err := s.exportInternalServices(); err != nil {
		return err
	}
	if err := registerServiceInstance(s.cfg.AppName); err != nil {
		return err
	}
	select {}
}

// tripleHandler stands for the triple protocol's per-request service lookup.
type tripleHandler struct{ srv *Server }

func (h *tripleHandler) handle(interfaceName, method string) (string, error) {
	svcOpts := h.srv.GetServiceOptionsByInterfaceName(interfaceName)
	if svcOpts == nil {
		return "", fmt.Errorf("no service found for %s", interfaceName)
	}
	return fmt.Sprintf("%s.%s -> %T", interfaceName, method, svcOpts.handler), nil
}

type GreetServer struct{}

func main() {
	srv := NewServer(&ServerOptions{AppName: "greet-provider"})
	if err := srv.Register(&GreetServer{}, &ServiceInfo{InterfaceName: "greet.GreetService", Methods: []string{"Greet"}}); err != nil {
		panic(err)
	}
	go func() {
		if err := srv.Serve(); err != nil {
			fmt.Println("serve:", err)
		}
	}()
	time.Sleep(100 * time.Millisecond) // Serve has exported everything and is parked

	h := &tripleHandler{srv: srv}
	res, err := h.handle("greet.GreetService", "Greet")
	fmt.Println("request:", res, err)
}
