// Project: nats.go (nats.go: Conn.processSlowConsumer, Conn.asyncDispatch, Conn.LastError, nc.ach)
// Bug: The reader goroutine reports slow consumers while holding nc.mu and pushes the user's
//      AsyncErrorCB onto the bounded nc.ach channel. The asyncDispatch goroutine runs the callback,
//      which calls nc.LastError() and needs nc.mu. Once ach is full the pusher blocks on the send
//      with nc.mu held while the dispatcher blocks on nc.mu: callbacks and every Conn API call hang.
// Upstream fix: nats-io/nats.go#365 replaces the bounded channel with an unbounded, separately locked callback list so pushing never blocks under nc.mu.

package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

const asyncCBChanSize = 32

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
	ach  chan func()
}

func Connect(opts Options) *Conn {
	nc := &Conn{Opts: opts, subs: map[int64]*Subscription{}, ach: make(chan func(), asyncCBChanSize)}
	go nc.asyncDispatch()
	return nc
}

func (nc *Conn) asyncDispatch() {
	for f := range nc.ach {
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
		nc.ach <- func() { nc.Opts.AsyncErrorCB(nc, s, ErrSlowConsumer) } // DEADLOCK HERE
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
