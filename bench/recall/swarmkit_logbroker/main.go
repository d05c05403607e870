// Project: moby/swarmkit (manager/logbroker/subscription.go, manager/logbroker/broker.go, watch/watch.go; docker/go-events broadcast.go, filter.go)
// Bug: subscription.watch's add() holds s.mu (write) and calls s.changed.Publish(s), handing the event to the
//      Broadcaster goroutine over its unbuffered channel. The Broadcaster is still delivering the previous event
//      through a node's Filter sink, whose matcher (from LogBroker.watchSubscriptions) calls s.Contains(nodeID)
//      -> s.mu.RLock(). Publisher waits for the Broadcaster, Broadcaster waits for s.mu: log streaming wedges.
// Upstream fix: moby/swarmkit#3006 (moby/moby#42314) releases s.mu before calling s.changed.Publish(s).

package main

import (
	"fmt"
	"sync"
)

type (
	Event       any
	Sink        interface{ Write(Event) error }
	MatcherFunc func(Event) bool
)

type Filter struct {
	queue   chan Event
	matcher MatcherFunc
}

func (f *Filter) Write(e Event) error {
	if f.matcher(e) {
		select {
		case f.queue <- e:
		default: // over the queue limit: dropped
		}
	}
	return nil
}

type Broadcaster struct {
	events chan Event
	adds   chan Sink
	sinks  []Sink
}

func (b *Broadcaster) Write(e Event) error { b.events <- e; return nil } // DEADLOCK HERE
func (b *Broadcaster) Add(s Sink)          { b.adds <- s }

func (b *Broadcaster) run() {
	for {
		select {
		case s := <-b.adds:
			b.sinks = append(b.sinks, s)
		case e := <-b.events:
			for _, s := range b.sinks {
				s.Write(e)
			}
		}
	}
}

type Queue struct{ broadcast *Broadcaster }

func (q *Queue) Publish(e Event) { q.broadcast.Write(e) }

func (q *Queue) CallbackWatch(matcher MatcherFunc) chan Event {
	ch := make(chan Event, 1024)
	q.broadcast.Add(&Filter{queue: ch, matcher: matcher})
	return ch
}

type Task struct{ ID, NodeID string }

type subscription struct {
	mu      sync.RWMutex
	nodes   map[string]struct{}
	changed *Queue
}

func (s *subscription) Contains(nodeID string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.nodes[nodeID]
	return ok
}

func (s *subscription) add(t *Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.nodes[t.NodeID]; !ok {
		s.nodes[t.NodeID] = struct{}{}
		s.changed.Publish(s)
	}
}

func (s *subscription) watch(tasks <-chan *Task) {
	for t := range tasks {
		s.add(t)
	}
}

// LogBroker.watchSubscriptions for one node's ListenSubscriptions stream.
func watchSubscriptions(q *Queue, nodeID string) chan Event {
	return q.CallbackWatch(func(event Event) bool { return event.(*subscription).Contains(nodeID) })
}

func main() {
	b := &Broadcaster{events: make(chan Event), adds: make(chan Sink)}
	go b.run()
	q := &Queue{broadcast: b}
	for i := range 8 {
		watchSubscriptions(q, fmt.Sprintf("node-%d", i))
	}
	sub := &subscription{nodes: map[string]struct{}{}, changed: q}
	tasks := make(chan *Task)
	done := make(chan struct{})
	go func() { sub.watch(tasks); close(done) }()
	for i := range 2000 {
		tasks <- &Task{ID: fmt.Sprintf("task-%d", i), NodeID: fmt.Sprintf("node-%d", i)}
	}
	close(tasks)
	<-done
	fmt.Println("subscription nodes:", len(sub.nodes))
}
