package ifacecall

import "sync"

// An interface field's candidates are the types the package stores into
// it, when it knows them: a queue whose sink only ever holds a fileSink
// does not call the Hub's Close, though Hub is a Sink too.

type Sink interface{ Close() }

type fileSink struct{}

func (fileSink) Close() {}

type queue struct {
	mu   sync.Mutex
	sink Sink
}

func newQueue(s Sink) *queue { return &queue{sink: s} }

func (q *queue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sink.Close()
}

type Hub struct {
	mu     sync.Mutex
	queues []*queue
}

func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, q := range h.queues {
		q.Close()
	}
}

func NewHub() *Hub {
	h := &Hub{}
	h.queues = append(h.queues, newQueue(fileSink{}))
	return h
}

// A chained queue does hold a Hub: queue.mu then Hub.mu there, against
// Hub.mu then queue.mu in Hub.Close.

type relay struct {
	mu   sync.Mutex
	next Sink
}

func newRelay(next Sink) *relay { return &relay{next: next} }

func (r *relay) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next.Close()
}

type Forwarder struct {
	mu     sync.Mutex
	relays []*relay
}

func (f *Forwarder) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.relays {
		r.Close()
	}
}

func Chain(h *Hub, f *Forwarder) {
	f.relays = append(f.relays, newRelay(h), newRelay(fileSink{}))
	h.mu.Lock()
	defer h.mu.Unlock()
	f.relays[0].mu.Lock() // want `lock order inversion: relay.mu then Hub.mu in relay.Close .*\[lock-order\]`
	f.relays[0].mu.Unlock()
}
