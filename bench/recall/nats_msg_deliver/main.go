// Modelled on nats.go (Conn.processMsg and Subscription waitForMsgs): each async
// subscription has a delivery goroutine that waits on a sync.Cond in a
// `for !cond { Wait() }` loop, pops a message, then drops sub.mu around the user
// callback and re-acquires it afterwards (mu.Unlock(); cb(); mu.Lock()). The
// callback is free to call back into the subscription or publish again.
package main

import (
	"fmt"
	"sync"
)

type Msg struct {
	Subject string
	Data    string
	Sub     *Subscription
}

type MsgHandler func(*Msg)

type Subscription struct {
	mu        sync.Mutex
	cond      *sync.Cond
	subject   string
	mcb       MsgHandler // immutable after subscribe
	msgs      []*Msg
	closed    bool
	delivered int
	done      chan struct{}
}

func (s *Subscription) Delivered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.delivered
}

// waitForMsgs holds s.mu except while running the user callback.
func (s *Subscription) waitForMsgs() {
	defer close(s.done)
	s.mu.Lock()
	for {
		for len(s.msgs) == 0 && !s.closed {
			s.cond.Wait()
		}
		if len(s.msgs) == 0 && s.closed {
			break
		}
		m := s.msgs[0]
		s.msgs = s.msgs[1:]
		s.delivered++

		s.mu.Unlock()
		s.mcb(m)
		s.mu.Lock()
	}
	s.mu.Unlock()
}

func (s *Subscription) Unsubscribe() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cond.Broadcast()
	<-s.done
}

type Conn struct {
	mu   sync.Mutex
	subs map[string]*Subscription
}

func (nc *Conn) Subscribe(subj string, cb MsgHandler) *Subscription {
	s := &Subscription{subject: subj, mcb: cb, done: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	nc.mu.Lock()
	nc.subs[subj] = s
	nc.mu.Unlock()
	go s.waitForMsgs()
	return s
}

// Publish routes locally: look up under nc.mu, then enqueue under sub.mu.
func (nc *Conn) Publish(subj, data string) {
	nc.mu.Lock()
	s := nc.subs[subj]
	nc.mu.Unlock()
	if s == nil {
		return
	}
	s.mu.Lock()
	if !s.closed {
		s.msgs = append(s.msgs, &Msg{Subject: subj, Data: data, Sub: s})
		s.cond.Signal()
	}
	s.mu.Unlock()
}

func main() {
	nc := &Conn{subs: make(map[string]*Subscription)}
	replies := nc.Subscribe("reply", func(m *Msg) {})
	req := nc.Subscribe("req", func(m *Msg) {
		// Re-entrant: callback touches its own sub and publishes.
		_ = m.Sub.Delivered()
		nc.Publish("reply", "re:"+m.Data)
	})

	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 25; j++ {
				nc.Publish("req", fmt.Sprintf("%d-%d", i, j))
			}
		}(i)
	}
	wg.Wait()
	req.Unsubscribe()
	replies.Unsubscribe()
	fmt.Println("req delivered", req.Delivered(), "replies delivered", replies.Delivered())
}
