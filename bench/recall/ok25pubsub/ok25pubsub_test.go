// Pattern: pub/sub hub with an OnEvent option hook. Subscribe and Unsubscribe
// emit a Validate event while h.mu is held and an Applied event after the
// unlock; the test hook only uses subscriberCountLocked for Validate and the
// locking SubscriberCount for Applied. Publish fans out to goroutines while
// holding h.mu, releases it, then waits; each goroutine's deferred cleanup
// calls wg.Done before taking h.mu to bump the delivery counter.
package ok25pubsub

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

type EventKind int

const (
	EventValidate EventKind = iota
	EventApplied
)

type Event struct {
	Kind  EventKind
	Topic string
	SubID int
	Join  bool
}

type Options struct {
	OnEvent func(Event)
}

type Subscriber struct {
	id    int
	topic string
	C     chan string
}

type Hub struct {
	mu        sync.Mutex
	opts      Options
	subs      map[string]map[int]*Subscriber
	nextID    int
	delivered int
}

func NewHub(opts Options) *Hub {
	return &Hub{opts: opts, subs: make(map[string]map[int]*Subscriber)}
}

func (h *Hub) emit(ev Event) {
	if h.opts.OnEvent != nil {
		h.opts.OnEvent(ev)
	}
}

// subscriberCountLocked requires h.mu.
func (h *Hub) subscriberCountLocked(topic string) int { return len(h.subs[topic]) }

func (h *Hub) SubscriberCount(topic string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.subscriberCountLocked(topic)
}

func (h *Hub) Delivered() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.delivered
}

func (h *Hub) Subscribe(topic string, buf int) *Subscriber {
	h.mu.Lock()
	h.nextID++
	s := &Subscriber{id: h.nextID, topic: topic, C: make(chan string, buf)}
	h.emit(Event{Kind: EventValidate, Topic: topic, SubID: s.id, Join: true})
	if h.subs[topic] == nil {
		h.subs[topic] = make(map[int]*Subscriber)
	}
	h.subs[topic][s.id] = s
	h.mu.Unlock()
	h.emit(Event{Kind: EventApplied, Topic: topic, SubID: s.id, Join: true})
	return s
}

func (h *Hub) Unsubscribe(s *Subscriber) {
	h.mu.Lock()
	h.emit(Event{Kind: EventValidate, Topic: s.topic, SubID: s.id})
	delete(h.subs[s.topic], s.id)
	h.mu.Unlock()
	close(s.C)
	h.emit(Event{Kind: EventApplied, Topic: s.topic, SubID: s.id})
}

// Publish delivers msg to every subscriber of topic and returns the fan-out.
func (h *Hub) Publish(topic, msg string) int {
	var wg sync.WaitGroup
	h.mu.Lock()
	n := 0
	for _, s := range h.subs[topic] {
		n++
		wg.Add(1)
		go func(s *Subscriber) {
			defer func() {
				wg.Done()
				h.mu.Lock()
				h.delivered++
				h.mu.Unlock()
			}()
			s.C <- msg
		}(s)
	}
	h.mu.Unlock()
	wg.Wait()
	return n
}

func TestHubEvents(t *testing.T) {
	var (
		recMu    sync.Mutex
		validate []int
		applied  []int
	)
	var hub *Hub
	hub = NewHub(Options{OnEvent: func(ev Event) {
		switch ev.Kind {
		case EventValidate:
			n := hub.subscriberCountLocked(ev.Topic)
			recMu.Lock()
			validate = append(validate, n)
			recMu.Unlock()
		case EventApplied:
			n := hub.SubscriberCount(ev.Topic)
			recMu.Lock()
			applied = append(applied, n)
			recMu.Unlock()
		}
	}})

	const subsN, msgs = 6, 40
	subs := make([]*Subscriber, subsN)
	var joinWG sync.WaitGroup
	for i := 0; i < subsN; i++ {
		joinWG.Add(1)
		go func(i int) {
			defer joinWG.Done()
			subs[i] = hub.Subscribe("jobs", 2)
		}(i)
	}
	joinWG.Wait()

	var consumers sync.WaitGroup
	got := make([]int, subsN)
	for i, s := range subs {
		consumers.Add(1)
		go func(i int, s *Subscriber) {
			defer consumers.Done()
			for range s.C {
				got[i]++
			}
		}(i, s)
	}

	var pubs sync.WaitGroup
	for p := 0; p < 4; p++ {
		pubs.Add(1)
		go func(p int) {
			defer pubs.Done()
			for m := 0; m < msgs/4; m++ {
				if n := hub.Publish("jobs", fmt.Sprintf("p%d-%d", p, m)); n != subsN {
					t.Errorf("fan-out %d, want %d", n, subsN)
				}
			}
		}(p)
	}
	pubs.Wait()

	deadline := time.Now().Add(5 * time.Second)
	for hub.Delivered() != subsN*msgs {
		if time.Now().After(deadline) {
			t.Fatalf("delivered %d, want %d", hub.Delivered(), subsN*msgs)
		}
		time.Sleep(time.Millisecond)
	}
	for _, s := range subs {
		hub.Unsubscribe(s)
	}
	consumers.Wait()
	for i, n := range got {
		if n != msgs {
			t.Fatalf("subscriber %d got %d messages, want %d", i, n, msgs)
		}
	}
	if hub.SubscriberCount("jobs") != 0 {
		t.Fatal("subscribers left behind")
	}
	recMu.Lock()
	nv, na := len(validate), len(applied)
	recMu.Unlock()
	if nv != 2*subsN || na != 2*subsN {
		t.Fatalf("events: %d validate, %d applied", nv, na)
	}
}
