// Pattern: a pub/sub broker configured through an Options struct whose
// OnSubscribe hook runs while the broker mutex is held; the hook only calls
// back through subscriberCountLocked, which does not lock. Close releases the
// mutex before waiting on the WaitGroup of subscriber goroutines, which take
// the mutex on their way out.
package main

import (
	"fmt"
	"os"
	"sync"
)

type Options struct {
	Buffer      int
	OnSubscribe func(b *Broker, topic string)
}

type subscription struct {
	id    int
	topic string
	ch    chan string
}

type Broker struct {
	mu       sync.Mutex
	opts     Options
	nextID   int
	topics   map[string][]*subscription
	finished map[int]int
	dropped  int
	closed   bool
	wg       sync.WaitGroup
}

func NewBroker(opts Options) *Broker {
	if opts.Buffer <= 0 {
		opts.Buffer = 16
	}
	return &Broker{opts: opts, topics: make(map[string][]*subscription), finished: make(map[int]int)}
}

// subscriberCountLocked must be called with b.mu held.
func (b *Broker) subscriberCountLocked(topic string) int {
	return len(b.topics[topic])
}

func (b *Broker) Subscribe(topic string, handle func(string)) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.nextID++
	s := &subscription{id: b.nextID, topic: topic, ch: make(chan string, b.opts.Buffer)}
	b.topics[topic] = append(b.topics[topic], s)
	if b.opts.OnSubscribe != nil {
		b.opts.OnSubscribe(b, topic)
	}
	b.wg.Add(1)
	go b.run(s, handle)
	return true
}

func (b *Broker) run(s *subscription, handle func(string)) {
	defer b.wg.Done()
	n := 0
	for msg := range s.ch {
		handle(msg)
		n++
	}
	b.mu.Lock()
	b.finished[s.id] = n
	b.mu.Unlock()
}

func (b *Broker) Publish(topic, msg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	for _, s := range b.topics[topic] {
		select {
		case s.ch <- msg:
		default:
			b.dropped++
		}
	}
}

func (b *Broker) Close() map[int]int {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	for _, subs := range b.topics {
		for _, s := range subs {
			close(s.ch)
		}
	}
	b.mu.Unlock()

	b.wg.Wait()

	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[int]int, len(b.finished))
	for k, v := range b.finished {
		out[k] = v
	}
	return out
}

func main() {
	var countsMu sync.Mutex
	peak := map[string]int{}
	broker := NewBroker(Options{
		Buffer: 64,
		OnSubscribe: func(b *Broker, topic string) {
			n := b.subscriberCountLocked(topic)
			countsMu.Lock()
			if n > peak[topic] {
				peak[topic] = n
			}
			countsMu.Unlock()
		},
	})

	var received sync.WaitGroup
	var got [3]int64
	var gotMu sync.Mutex
	for i := 0; i < 3; i++ {
		idx := i
		broker.Subscribe(fmt.Sprintf("t%d", i%2), func(m string) {
			gotMu.Lock()
			got[idx]++
			gotMu.Unlock()
		})
	}

	for p := 0; p < 4; p++ {
		received.Add(1)
		go func(p int) {
			defer received.Done()
			for i := 0; i < 20; i++ {
				broker.Publish(fmt.Sprintf("t%d", i%2), fmt.Sprintf("p%d-%d", p, i))
			}
		}(p)
	}
	received.Wait()

	done := broker.Close()
	if len(done) != 3 {
		fmt.Println("expected 3 finished subscribers, got", len(done))
		os.Exit(1)
	}
	countsMu.Lock()
	fmt.Println("peak subscribers:", peak, "finished:", done)
	countsMu.Unlock()
}
