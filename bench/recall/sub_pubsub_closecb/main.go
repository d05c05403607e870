// Pattern: Tendermint/CometBFT libs/pubsub Server + Subscription: Publish sends
// to each subscription's Out() channel while holding the server lock; a client
// goroutine only consumes Out() and calls back into the server (Err, Unsubscribe)
// after Out() has been closed, which happens under the server lock on Stop.
package main

import (
	"errors"
	"fmt"
	"sync"
)

var ErrTerminated = errors.New("pubsub server terminated")

type Message struct {
	Query string
	Data  int
}

type Subscription struct {
	clientID string
	out      chan Message
	closed   bool
	err      error
}

func (s *Subscription) Out() <-chan Message { return s.out }

type Server struct {
	mu   sync.Mutex
	subs map[string]*Subscription
}

func (srv *Server) Subscribe(clientID string) *Subscription {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	s := &Subscription{clientID: clientID, out: make(chan Message)}
	srv.subs[clientID] = s
	return s
}

func (srv *Server) Publish(m Message) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for _, s := range srv.subs {
		if s.closed {
			continue
		}
		s.out <- m
	}
}

func (srv *Server) Err(clientID string) error {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if s, ok := srv.subs[clientID]; ok {
		return s.err
	}
	return nil
}

func (srv *Server) Unsubscribe(clientID string) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	delete(srv.subs, clientID)
}

func (srv *Server) NumClients() int {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return len(srv.subs)
}

func (srv *Server) Stop() {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for _, s := range srv.subs {
		if !s.closed {
			s.closed = true
			s.err = ErrTerminated
			close(s.out)
		}
	}
}

func main() {
	srv := &Server{subs: map[string]*Subscription{}}
	var wg sync.WaitGroup
	sums := make([]int, 4)
	for i := 0; i < 4; i++ {
		sub := srv.Subscribe(fmt.Sprintf("client-%d", i))
		wg.Add(1)
		go func(idx int, sub *Subscription) {
			defer wg.Done()
			for m := range sub.Out() {
				sums[idx] += m.Data // local work only while the channel is open
			}
			if err := srv.Err(sub.clientID); !errors.Is(err, ErrTerminated) {
				panic(fmt.Sprintf("unexpected err %v", err))
			}
			srv.Unsubscribe(sub.clientID)
		}(i, sub)
	}

	var pubs sync.WaitGroup
	for p := 0; p < 2; p++ {
		pubs.Add(1)
		go func(p int) {
			defer pubs.Done()
			for i := 1; i <= 20; i++ {
				srv.Publish(Message{Query: "tm.event='NewBlock'", Data: i})
			}
		}(p)
	}
	pubs.Wait()
	srv.Stop()
	wg.Wait()
	fmt.Println("sums:", sums, "clients left:", srv.NumClients())
}
