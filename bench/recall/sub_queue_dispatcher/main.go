// Pattern: docker/go-events Queue: Write only appends to an internal list under
// the queue mutex and signals a sync.Cond; a single run() goroutine pops events
// and writes them to the sink channels with no lock held. Subscribers may call
// any queue method (even Write) while handling, since none waits on a sender.
package main

import (
	"errors"
	"fmt"
	"sync"
)

var ErrClosed = errors.New("queue closed")

type Event struct {
	Kind string
	N    int
}

type Queue struct {
	mu        sync.Mutex
	cond      *sync.Cond
	events    []Event
	sinks     []chan Event
	closed    bool
	delivered int
	done      chan struct{}
}

func NewQueue(sinks ...chan Event) *Queue {
	q := &Queue{sinks: sinks, done: make(chan struct{})}
	q.cond = sync.NewCond(&q.mu)
	go q.run()
	return q
}

func (q *Queue) Write(ev Event) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrClosed
	}
	q.events = append(q.events, ev)
	q.cond.Signal()
	return nil
}

func (q *Queue) next() (Event, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.events) == 0 && !q.closed {
		q.cond.Wait()
	}
	if len(q.events) == 0 {
		return Event{}, false
	}
	ev := q.events[0]
	q.events = q.events[1:]
	return ev, true
}

func (q *Queue) run() {
	defer close(q.done)
	for {
		ev, ok := q.next()
		if !ok {
			for _, ch := range q.sinks {
				close(ch)
			}
			return
		}
		for _, ch := range q.sinks {
			ch <- ev
		}
		q.mu.Lock()
		q.delivered++
		q.mu.Unlock()
	}
}

func (q *Queue) Pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.events)
}

func (q *Queue) Close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
	<-q.done
}

func main() {
	sinks := []chan Event{make(chan Event), make(chan Event), make(chan Event)}
	q := NewQueue(sinks...)

	var wg, pendingFollowUps sync.WaitGroup
	pendingFollowUps.Add(10) // one per "create" event below
	followUps := make([]int, len(sinks))
	for i, ch := range sinks {
		wg.Add(1)
		go func(idx int, ch <-chan Event) {
			defer wg.Done()
			for ev := range ch {
				_ = q.Pending()
				if ev.Kind == "create" && idx == 0 {
					// Derived event, written back into the same queue.
					if q.Write(Event{Kind: "audit", N: ev.N}) == nil {
						followUps[idx]++
					}
					pendingFollowUps.Done()
				}
			}
		}(i, ch)
	}

	for i := 0; i < 30; i++ {
		kind := "update"
		if i%3 == 0 {
			kind = "create"
		}
		if err := q.Write(Event{Kind: kind, N: i}); err != nil {
			fmt.Println("write:", err)
		}
	}
	pendingFollowUps.Wait() // no lock held while waiting
	q.Close()
	wg.Wait()
	q.mu.Lock()
	fmt.Println("delivered:", q.delivered, "follow-ups accepted:", followUps[0])
	q.mu.Unlock()
}
