// go-micro server/rpc_server.go: rpcServer.Subscribe takes s.Lock() and, when
// the subscriber is already registered, returns an error without unlocking.
// The next Handle/Register/Start on the server blocks on s.Lock forever.
// Fixed in micro/go-micro#224 ("fix possible deadlock since code can return
// without unlocking the Mutex").
package main

import (
	"fmt"
	"sync"
)

type Handler interface{ Name() string }

type Subscriber interface{ Topic() string }

type subscriber struct {
	topic    string
	handlers []func(msg []byte) error
}

func (s *subscriber) Topic() string { return s.topic }

type rpcHandler struct{ name string }

func (h *rpcHandler) Name() string { return h.name }

type rpcServer struct {
	sync.RWMutex
	name        string
	handlers    map[string]Handler
	subscribers map[*subscriber][]string // subscriber -> broker subscription ids
}

func newRPCServer(name string) *rpcServer {
	return &rpcServer{name: name, handlers: map[string]Handler{}, subscribers: map[*subscriber][]string{}}
}

func (s *rpcServer) Handle(h Handler) error {
	s.Lock()
	defer s.Unlock()
	s.handlers[h.Name()] = h
	return nil
}

func (s *rpcServer) Subscribe(sb Subscriber) error {
	sub, ok := sb.(*subscriber)
	if !ok {
		return fmt.Errorf("invalid subscriber: expected *subscriber")
	}
	if len(sub.handlers) == 0 {
		return fmt.Errorf("invalid subscriber: no handler functions")
	}
	s.Lock()
	_, ok = s.subscribers[sub]
	if ok {
		return fmt.Errorf("subscriber %v already exists", sub.topic)
	}
	s.subscribers[sub] = nil
	s.Unlock()
	return nil
}

func (s *rpcServer) Register() error {
	s.Lock()
	defer s.Unlock()
	for sb := range s.subscribers {
		s.subscribers[sb] = []string{s.name + "/" + sb.topic}
	}
	fmt.Printf("registered %s: %d handlers, %d subscribers\n", s.name, len(s.handlers), len(s.subscribers))
	return nil
}

func main() {
	srv := newRPCServer("go.micro.srv.greeter")
	events := &subscriber{topic: "go.micro.topic.events", handlers: []func([]byte) error{
		func(msg []byte) error { return nil },
	}}

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // service.Init + user main both wiring the same subscriber
		defer wg.Done()
		for i := 0; i < 2; i++ {
			if err := srv.Subscribe(events); err != nil {
				fmt.Println("subscribe:", err)
			}
		}
		_ = srv.Handle(&rpcHandler{name: "Greeter"})
	}()
	wg.Wait()

	done := make(chan struct{})
	go func() { // service.Run -> server.Start -> Register
		defer close(done)
		_ = srv.Register()
	}()
	<-done
}
