// Fixed twin of natsgo_asynccb: nats-io/nats.go#365 replaces the bounded channel with an unbounded, separately locked callback list so pushing never blocks under nc.mu.

package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

var ErrSlowConsumer = errors.New("nats: slow consumer, messages dropped")

type ErrHandler func(*Conn, *Subscription, error)

type Options struct {
	Name         string
	AsyncErrorCB ErrHandler
}

type Subscription struct {
	Subject string
	sc      bool
}

type Conn struct {
	mu   sync.Mutex
	Opts Options
	err  error
	subs map[int64]*Subscription
	ach  *asyncCallbacksHandler
}

type asyncCallbacksHandler struct {
	mu    sync.Mutex
	cond  *sync.Cond
	queue []func()
}

func (ac *asyncCallbacksHandler) push(f func()) {
	ac.mu.Lock()
	ac.queue = append(ac.queue, f)
	ac.cond.Signal()
	ac.mu.Unlock()
}

func Connect(opts Options) *Conn {
	nc := &Conn{Opts: opts, subs: map[int64]*Subscription{}, ach: &asyncCallbacksHandler{}}
	nc.ach.cond = sync.NewCond(&nc.ach.mu)
	go nc.asyncDispatch()
	return nc
}

func (nc *Conn) asyncDispatch() {
	ac := nc.ach
	for {
		ac.mu.Lock()
		for len(ac.queue) == 0 {
			ac.cond.Wait()
		}
		f := ac.queue[0]
		ac.queue = ac.queue[1:]
		ac.mu.Unlock()
		f()
	}
}

func (nc *Conn) LastError() error {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	return nc.err
}

func (nc *Conn) processSlowConsumer(s *Subscription) {
	nc.mu.Lock()
	nc.err = ErrSlowConsumer
	if nc.Opts.AsyncErrorCB != nil && !s.sc {
		nc.ach.push(func() { nc.Opts.AsyncErrorCB(nc, s, ErrSlowConsumer) })
	}
	s.sc = true
	nc.mu.Unlock()
}

func (nc *Conn) Subscribe(subj string) *Subscription {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	s := &Subscription{Subject: subj}
	nc.subs[int64(len(nc.subs)+1)] = s
	return s
}

// readLoop: every subscription's pending buffer overflowed during a burst.
func (nc *Conn) processMsgBurst() {
	nc.mu.Lock()
	subs := make([]*Subscription, 0, len(nc.subs))
	for _, s := range nc.subs {
		subs = append(subs, s)
	}
	nc.mu.Unlock()
	for _, s := range subs {
		nc.processSlowConsumer(s)
	}
}

func main() {
	var reported sync.WaitGroup
	nc := Connect(Options{Name: "orders-worker", AsyncErrorCB: func(c *Conn, s *Subscription, err error) {
		time.Sleep(time.Millisecond) // ship to the log pipeline
		fmt.Printf("async error on %q: %v (last error: %v)\n", s.Subject, err, c.LastError())
		reported.Done()
	}})
	for i := range 64 {
		nc.Subscribe(fmt.Sprintf("orders.region.%d", i))
	}
	reported.Add(64)
	nc.processMsgBurst()
	reported.Wait()
	fmt.Println("all slow consumers reported")
}
