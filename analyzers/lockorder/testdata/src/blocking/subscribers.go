package blocking

import "sync"

// Subscriber channels kept in a slice are the channels subscribed: a
// broker that sends to each under its lock waits for a subscriber whose
// loop needs that lock (go-ethereum's tx pool publishing on its feed
// while the miner's loop reads the pool).
type Event struct{ n int }

type Broker struct {
	mu   sync.Mutex
	subs []chan Event
	seen int
}

func (b *Broker) Subscribe(ch chan Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.subs = append(b.subs, ch)
}

func (b *Broker) Publish(ev Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seen++
	for _, ch := range b.subs {
		ch <- ev // want `Broker.mu \(taken at subscribers.go:\d+\) is held across a channel send; the goroutine started by the go statement, which would unblock it, also takes Broker.mu \[blocking-held\]`
	}
}

func (b *Broker) Seen() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.seen
}

type Miner struct {
	broker *Broker
	events chan Event
}

func StartMiner(b *Broker) *Miner {
	m := &Miner{broker: b, events: make(chan Event)}
	b.Subscribe(m.events)
	go m.loop()
	return m
}

func (m *Miner) loop() {
	for range m.events {
		_ = m.broker.Seen()
	}
}

// Correct: the feed copies its subscribers under its lock and sends
// after letting it go.
type Feed struct {
	mu   sync.Mutex
	subs []chan Event
	sent int
}

func (f *Feed) Subscribe(ch chan Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.subs = append(f.subs, ch)
}

func (f *Feed) Send(ev Event) {
	f.mu.Lock()
	subs := append([]chan Event(nil), f.subs...)
	f.sent++
	f.mu.Unlock()
	for _, ch := range subs {
		ch <- ev
	}
}

func (f *Feed) Sent() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sent
}

type Reader struct {
	feed   *Feed
	events chan Event
}

func StartReader(f *Feed) *Reader {
	r := &Reader{feed: f, events: make(chan Event)}
	f.Subscribe(r.events)
	go r.loop()
	return r
}

func (r *Reader) loop() {
	for range r.events {
		_ = r.feed.Sent()
	}
}
