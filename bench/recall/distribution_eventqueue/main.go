// Project: docker/distribution (notifications/sinks.go, notifications/endpoint.go)
// Bug: Broadcaster.Close held b.mu while closing each endpoint's eventQueue. eventQueue.Close waits
// on eq.cond for the run goroutine's final flush, but that goroutine reports each delivered block to
// the egress listener (Broadcaster.egress) which needs b.mu. The flush never completes, the cond is
// never broadcast, and registry shutdown hangs with pending webhook events.
// Upstream fix: close sinks outside the broadcaster lock (snapshot sinks, unlock, then close); modelled, PR number not recalled.
package main

import (
	"container/list"
	"fmt"
	"sync"
	"time"
)

type Event struct {
	ID     string
	Action string
	Target string
}

type Sink interface {
	Write(events ...Event) error
	Close() error
}

type eventQueueListener interface {
	ingress(events ...Event)
	egress(events ...Event)
}

type eventQueue struct {
	sink      Sink
	events    *list.List
	listeners []eventQueueListener
	cond      *sync.Cond
	mu        sync.Mutex
	closed    bool
}

func newEventQueue(sink Sink, listeners ...eventQueueListener) *eventQueue {
	eq := eventQueue{sink: sink, events: list.New(), listeners: listeners}
	eq.cond = sync.NewCond(&eq.mu)
	go eq.run()
	return &eq
}

func (eq *eventQueue) Write(events ...Event) error {
	eq.mu.Lock()
	defer eq.mu.Unlock()
	if eq.closed {
		return fmt.Errorf("eventqueue: closed")
	}
	for _, l := range eq.listeners {
		l.ingress(events...)
	}
	eq.events.PushBack(events)
	eq.cond.Signal()
	return nil
}

func (eq *eventQueue) Close() error {
	eq.mu.Lock()
	defer eq.mu.Unlock()
	if eq.closed {
		return fmt.Errorf("eventqueue: already closed")
	}
	eq.closed = true
	eq.cond.Signal() // signal flushes queue
	eq.cond.Wait()   // wait for signal from last flush
	return eq.sink.Close()
}

func (eq *eventQueue) run() {
	for {
		block := eq.next()
		if block == nil {
			return
		}
		if err := eq.sink.Write(block...); err != nil {
			fmt.Println("eventqueue: error writing events:", err)
		}
		for _, l := range eq.listeners {
			l.egress(block...)
		}
	}
}

func (eq *eventQueue) next() []Event {
	eq.mu.Lock()
	defer eq.mu.Unlock()
	for eq.events.Len() < 1 {
		if eq.closed {
			eq.cond.Broadcast()
			return nil
		}
		eq.cond.Wait()
	}
	front := eq.events.Front()
	block := front.Value.([]Event)
	eq.events.Remove(front)
	return block
}

// httpSink posts envelopes to a webhook endpoint.
type httpSink struct{ url string }

func (s *httpSink) Write(events ...Event) error {
	time.Sleep(20 * time.Millisecond) // POST application/vnd.docker.distribution.events.v1+json
	return nil
}

func (s *httpSink) Close() error { return nil }

type Broadcaster struct {
	mu      sync.Mutex
	sinks   []Sink
	pending map[string]int
}

func NewBroadcaster(urls ...string) *Broadcaster {
	b := &Broadcaster{pending: make(map[string]int)}
	for _, u := range urls {
		b.sinks = append(b.sinks, newEventQueue(&httpSink{url: u}, b))
	}
	return b
}

func (b *Broadcaster) ingress(events ...Event) {
	for _, e := range events {
		b.pending[e.Target]++ // called under eq.mu only; b.mu is held by Write
	}
}

func (b *Broadcaster) egress(events ...Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range events {
		b.pending[e.Target]--
	}
}

func (b *Broadcaster) Write(events ...Event) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, sink := range b.sinks {
		if err := sink.Write(events...); err != nil {
			return err
		}
	}
	return nil
}

func (b *Broadcaster) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, sink := range b.sinks {
		if err := sink.Close(); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	b := NewBroadcaster("http://hooks.internal/registry")
	for i := 0; i < 3; i++ {
		b.Write(Event{ID: fmt.Sprint(i), Action: "push", Target: "library/alpine"})
	}
	// registry shutting down while webhook deliveries are still queued
	if err := b.Close(); err != nil {
		fmt.Println(err)
	}
	fmt.Println("notifications closed, pending:", b.pending["library/alpine"])
}
