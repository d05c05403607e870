// Pattern: moby daemon/events Events + pkg/pubsub Publisher: the event history
// is guarded by Events.mu, the subscriber set by Publisher.m. PublishMessage
// appends under Events.mu, releases it, and only then sends to subscribers
// while holding Publisher.m; subscribers read history via Events.mu only, so
// the lock held during the send is never one a subscriber waits for.
package main

import (
	"fmt"
	"sync"
)

type Message struct {
	Action string
	ID     string
	Seq    int
}

type Publisher struct {
	m           sync.RWMutex
	subscribers map[chan Message]struct{}
}

func (p *Publisher) Subscribe() chan Message {
	ch := make(chan Message)
	p.m.Lock()
	p.subscribers[ch] = struct{}{}
	p.m.Unlock()
	return ch
}

func (p *Publisher) Publish(v Message) {
	p.m.RLock()
	defer p.m.RUnlock()
	for sub := range p.subscribers {
		sub <- v
	}
}

func (p *Publisher) Close() {
	p.m.Lock()
	defer p.m.Unlock()
	for sub := range p.subscribers {
		delete(p.subscribers, sub)
		close(sub)
	}
}

const eventsLimit = 64

type Events struct {
	mu     sync.Mutex
	events []Message
	seq    int
	pub    *Publisher
}

func New() *Events {
	return &Events{pub: &Publisher{subscribers: map[chan Message]struct{}{}}}
}

func (e *Events) PublishMessage(action, id string) {
	e.mu.Lock()
	e.seq++
	jm := Message{Action: action, ID: id, Seq: e.seq}
	if len(e.events) >= eventsLimit {
		e.events = e.events[1:]
	}
	e.events = append(e.events, jm)
	e.mu.Unlock()
	e.pub.Publish(jm)
}

// Since returns buffered history newer than seq.
func (e *Events) Since(seq int) []Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Message
	for _, m := range e.events {
		if m.Seq > seq {
			out = append(out, m)
		}
	}
	return out
}

func main() {
	ev := New()
	var subs sync.WaitGroup
	backlog := make([]int, 3)
	for i := 0; i < 3; i++ {
		ch := ev.pub.Subscribe()
		subs.Add(1)
		go func(idx int, ch chan Message) {
			defer subs.Done()
			for m := range ch {
				backlog[idx] += len(ev.Since(m.Seq))
			}
		}(i, ch)
	}

	var producers sync.WaitGroup
	for _, comp := range []string{"container", "network"} {
		producers.Add(1)
		go func(comp string) {
			defer producers.Done()
			for i := 0; i < 40; i++ {
				ev.PublishMessage("create", fmt.Sprintf("%s-%d", comp, i))
			}
		}(comp)
	}
	producers.Wait()
	ev.pub.Close()
	subs.Wait()
	fmt.Println("history kept:", len(ev.Since(0)), "backlog observed:", backlog)
}
