package blocking

import "sync"

// An interface call blocks if one of its candidates does: closing every
// sink under the hub's lock waits, in the queue's Close, for its run
// goroutine, which needs that lock to report its last delivery
// (distribution's Broadcaster.Close). The other candidate never blocks.
type Sink interface{ Close() }

type Hub struct {
	mu        sync.Mutex
	sinks     []Sink
	delivered int
}

type queue struct {
	hub  *Hub
	done chan struct{}
}

type logSink struct{ lines int }

func (l *logSink) Close() { l.lines = 0 }

func (q *queue) run() {
	q.hub.report()
	close(q.done)
}

func (q *queue) Close() { <-q.done }

func (h *Hub) report() {
	h.mu.Lock()
	h.delivered++
	h.mu.Unlock()
}

func (h *Hub) Add(s Sink) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sinks = append(h.sinks, s)
}

func NewQueue(h *Hub) *queue {
	q := &queue{hub: h, done: make(chan struct{})}
	go q.run()
	h.Add(q)
	h.Add(&logSink{})
	return q
}

func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.sinks {
		s.Close() // want `Hub.mu \(taken at candidates.go:\d+\) is held across a channel receive \(in queue.Close at candidates.go:\d+\); the goroutine started by the go statement, which would unblock it, also takes Hub.mu \[blocking-held\]`
	}
}

// Correct: the sinks are closed after the lock is released.
func (h *Hub) Shutdown() {
	h.mu.Lock()
	sinks := h.sinks
	h.sinks = nil
	h.mu.Unlock()
	for _, s := range sinks {
		s.Close()
	}
}
