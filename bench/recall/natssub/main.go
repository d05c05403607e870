// Like nats.go async Subscription delivery (pCond / waitForMsgs): a
// sync.Cond bounded pending queue shared by producers and consumers. Wait
// is always called in a loop with the cond's lock held; Close broadcasts.
package main

import (
	"fmt"
	"sync"
)

type Msg struct {
	Subject string
	Data    int
}

type Subscription struct {
	mu       sync.Mutex
	notEmpty *sync.Cond
	notFull  *sync.Cond
	pending  []*Msg
	limit    int
	closed   bool
	handled  int
}

func newSubscription(limit int) *Subscription {
	s := &Subscription{limit: limit}
	s.notEmpty = sync.NewCond(&s.mu)
	s.notFull = sync.NewCond(&s.mu)
	return s
}

// deliver enqueues m, blocking while the pending queue is full.
func (s *Subscription) deliver(m *Msg) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.pending) >= s.limit && !s.closed {
		s.notFull.Wait()
	}
	if s.closed {
		return false
	}
	s.pending = append(s.pending, m)
	s.notEmpty.Signal()
	return true
}

// waitForMsgs is the per-subscription dispatcher loop.
func (s *Subscription) waitForMsgs(handler func(*Msg)) {
	for {
		s.mu.Lock()
		for len(s.pending) == 0 && !s.closed {
			s.notEmpty.Wait()
		}
		if len(s.pending) == 0 && s.closed {
			s.mu.Unlock()
			return
		}
		m := s.pending[0]
		s.pending = s.pending[1:]
		s.notFull.Signal()
		s.mu.Unlock()

		handler(m) // user callback runs without s.mu

		s.mu.Lock()
		s.handled++
		s.mu.Unlock()
	}
}

func (s *Subscription) Unsubscribe() {
	s.mu.Lock()
	s.closed = true
	s.notEmpty.Broadcast()
	s.notFull.Broadcast()
	s.mu.Unlock()
}

func main() {
	sub := newSubscription(4)
	var sumMu sync.Mutex
	sum := 0
	var consumers, producers sync.WaitGroup
	for i := 0; i < 3; i++ {
		consumers.Add(1)
		go func() {
			defer consumers.Done()
			sub.waitForMsgs(func(m *Msg) {
				sumMu.Lock()
				sum += m.Data
				sumMu.Unlock()
			})
		}()
	}
	for p := 0; p < 4; p++ {
		producers.Add(1)
		go func(p int) {
			defer producers.Done()
			for i := 1; i <= 100; i++ {
				sub.deliver(&Msg{Subject: fmt.Sprintf("orders.%d", p), Data: i})
			}
		}(p)
	}
	producers.Wait()
	sub.Unsubscribe()
	consumers.Wait()
	sub.mu.Lock()
	fmt.Println("handled:", sub.handled, "sum:", sum)
	sub.mu.Unlock()
}
