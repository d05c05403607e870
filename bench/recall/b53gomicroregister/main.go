// Project: micro/go-micro v4.9.0 (the same Register code exists in v2 and v3).
// Files: server/rpc_server.go (rpcServer.Register, rpcServer.Options, rpcServer.Init, rpcServer.Handle,
// rpcServer.Start and its re-register loop), server/options.go, registry/memory (Registry.Register).
// Issue: micro/go-micro#2707 "[BUG] v4.9.0 rpc_server.go register function read lock re-entry".
// Fix: later go-micro v4 releases rewrote Register around separate helpers (s.getOptions(),
// s.getCachedService()), so no read lock is held across the call that reads the options.
//
// rpcServer embeds a sync.RWMutex. Register begins with
//
//	s.RLock(); rsvc := s.rsvc; config := s.Options(); s.RUnlock()
//
// and Options is the exported accessor, which read-locks the same mutex again. Register runs on
// Start and then every RegisterInterval from the server's loop. If a writer asks for the lock between
// the two read locks -- Init (called by micro.Service.Init, or a config reload), Handle or Subscribe --
// Go's RWMutex blocks the nested RLock behind the pending writer, and the writer waits for the outer
// read lock: the server stops re-registering and every later Options/Init call hangs.
package main

import (
	"fmt"
	"sync"
	"time"
)

type Service struct {
	Name    string
	Version string
	Nodes   []*Node
}

type Node struct {
	Id      string
	Address string
}

// Registry is the go-micro registry interface; memory is the in-process implementation.
type Registry interface {
	Register(s *Service, ttl time.Duration) error
	String() string
}

type memoryRegistry struct {
	sync.RWMutex
	records map[string]*Service
}

func (m *memoryRegistry) Register(s *Service, ttl time.Duration) error {
	m.Lock()
	defer m.Unlock()
	m.records[s.Name] = s
	return nil
}

func (m *memoryRegistry) String() string { return "memory" }

type Options struct {
	Name             string
	Id               string
	Version          string
	Address          string
	Metadata         map[string]string
	Registry         Registry
	RegisterTTL      time.Duration
	RegisterInterval time.Duration
}

type Option func(*Options)

func Metadata(md map[string]string) Option { return func(o *Options) { o.Metadata = md } }

type Handler interface{ Name() string }

type rpcServer struct {
	sync.RWMutex
	opts       Options
	handlers   map[string]Handler
	registered bool
	// Cached service
	rsvc *Service

	// preemptAt stands for the scheduler pausing Register between its two reads;
	// the reproduction lengthens it so the writer arrives there every time.
	preemptAt time.Duration
}

func (s *rpcServer) Options() Options {
	s.RLock()
	opts := s.opts
	s.RUnlock()
	return opts
}

func (s *rpcServer) Init(opts ...Option) error {
	s.Lock()
	defer s.Unlock()
	for _, opt := range opts {
		opt(&s.opts)
	}
	s.rsvc = nil
	return nil
}

func (s *rpcServer) Handle(h Handler) error {
	s.Lock()
	defer s.Unlock()
	s.handlers[h.Name()] = h
	return nil
}

func (s *rpcServer) Register() error {
	s.RLock()
	rsvc := s.rsvc
	time.Sleep(s.preemptAt)
	config := s.Options()
	s.RUnlock()

	regFunc := func(service *Service) error {
		return config.Registry.Register(service, config.RegisterTTL)
	}

	// have we registered before?
	if rsvc != nil {
		return regFunc(rsvc)
	}

	node := &Node{Id: config.Name + "-" + config.Id, Address: config.Address}
	service := &Service{Name: config.Name, Version: config.Version, Nodes: []*Node{node}}
	if err := regFunc(service); err != nil {
		return err
	}

	s.Lock()
	defer s.Unlock()
	s.registered = true
	s.rsvc = service
	return nil
}

func (s *rpcServer) Start() error {
	config := s.Options()
	if err := s.Register(); err != nil {
		return err
	}
	go func() {
		t := time.NewTicker(config.RegisterInterval)
		defer t.Stop()
		for range t.C {
			if err := s.Register(); err != nil {
				fmt.Println("server register error:", err)
			}
		}
	}()
	return nil
}

func main() {
	reg := &memoryRegistry{records: map[string]*Service{}}
	s := &rpcServer{
		opts: Options{Name: "go.micro.srv.greeter", Id: "1", Version: "latest", Address: "127.0.0.1:50051",
			Registry: reg, RegisterTTL: 30 * time.Second, RegisterInterval: 15 * time.Second},
		handlers:  map[string]Handler{},
		preemptAt: 100 * time.Millisecond,
	}

	// service.Run() starts the server in its own goroutine ...
	started := make(chan error, 1)
	go func() { started <- s.Start() }()

	// ... while the application applies late options through service.Init.
	time.Sleep(30 * time.Millisecond)
	if err := s.Init(Metadata(map[string]string{"region": "eu"})); err != nil {
		fmt.Println("init error:", err)
	}
	fmt.Println("server started:", <-started == nil, "registered services:", len(reg.records))
}
