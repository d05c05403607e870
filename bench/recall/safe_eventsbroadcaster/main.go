// Modelled on docker/go-events as used by containerd and moby: a
// Broadcaster holds its mutex while writing each event to every Sink. The
// Channel sink's Write blocks until its consumer receives (or the sink is
// closed); the Queue sink's Write just appends. Consumers of the Channel
// sink only use their own mutex, and the Queue's goroutine only uses the
// queue's and destination's mutexes, so no unblocking party needs b.mu.
package main

import (
	"fmt"
	"sync"
)

type Event string

type Sink interface {
	Write(Event) error
	Close() error
}

// Channel sink: Write blocks until a receiver takes the event.
type Channel struct {
	C      chan Event
	closed chan struct{}
	once   sync.Once
}

func NewChannel(buffer int) *Channel {
	return &Channel{C: make(chan Event, buffer), closed: make(chan struct{})}
}

func (ch *Channel) Write(e Event) error {
	select {
	case ch.C <- e:
		return nil
	case <-ch.closed:
		return fmt.Errorf("channel sink closed")
	}
}

func (ch *Channel) Close() error { ch.once.Do(func() { close(ch.closed) }); return nil }

// memorySink is the Queue's destination.
type memorySink struct {
	mu     sync.Mutex
	events []Event
}

func (m *memorySink) Write(e Event) error {
	m.mu.Lock()
	m.events = append(m.events, e)
	m.mu.Unlock()
	return nil
}
func (m *memorySink) Close() error { return nil }

// Queue sink: Write never blocks; a goroutine forwards to dst.
type Queue struct {
	dst  Sink
	ch   chan Event
	done chan struct{}
	mu   sync.Mutex
	buf  []Event
}

func NewQueue(dst Sink) *Queue {
	q := &Queue{dst: dst, ch: make(chan Event, 1), done: make(chan struct{})}
	go func() {
		defer close(q.done)
		for range q.ch { // wake-ups
			q.mu.Lock()
			pending := q.buf
			q.buf = nil
			q.mu.Unlock()
			for _, e := range pending {
				q.dst.Write(e)
			}
		}
	}()
	return q
}

func (q *Queue) Write(e Event) error {
	q.mu.Lock()
	q.buf = append(q.buf, e)
	q.mu.Unlock()
	select {
	case q.ch <- e: // coalesced wake-up, never blocks
	default:
	}
	return nil
}

func (q *Queue) Close() error { close(q.ch); <-q.done; return nil }

type Broadcaster struct {
	mu    sync.Mutex
	sinks []Sink
}

func (b *Broadcaster) Write(e Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.sinks {
		s.Write(e) // may block in Channel.Write
	}
}

func main() {
	dst := &memorySink{}
	ch := NewChannel(0)
	b := &Broadcaster{sinks: []Sink{NewQueue(dst), ch}}

	var cmu sync.Mutex
	received := 0
	consumerDone := make(chan struct{})
	go func() { // consumer of the channel sink: never touches b.mu
		defer close(consumerDone)
		for range ch.C {
			cmu.Lock()
			received++
			cmu.Unlock()
		}
	}()

	var wg sync.WaitGroup
	for p := 0; p < 4; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				b.Write(Event(fmt.Sprintf("/tasks/start p%d-%d", p, i)))
			}
		}(p)
	}
	wg.Wait()
	b.mu.Lock()
	for _, s := range b.sinks {
		s.Close()
	}
	b.mu.Unlock()
	close(ch.C) // no writer remains
	<-consumerDone
	dst.mu.Lock()
	fmt.Println("queued:", len(dst.events), "received:", received)
	dst.mu.Unlock()
}
