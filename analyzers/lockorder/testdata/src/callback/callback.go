package callback

import "sync"

type Bus struct {
	mu      sync.Mutex
	onEvent func()
}

type Sink struct {
	mu sync.Mutex
	b  *Bus
}

func NewSink(b *Bus) *Sink {
	s := &Sink{b: b}
	b.onEvent = s.handle
	return s
}

func (s *Sink) handle() {
	s.mu.Lock()
	s.mu.Unlock()
}

// publish calls the callback with the bus lock held: Bus.mu -> Sink.mu.
func (b *Bus) publish() {
	b.mu.Lock()
	b.onEvent()
	b.mu.Unlock()
}

func (s *Sink) flush() {
	s.mu.Lock()
	s.b.mu.Lock() // want `lock order inversion: Bus.mu then Sink.mu in Bus.publish \(callback.go:28 -> callback.go:29 via Sink.handle\) but Sink.mu then Bus.mu in Sink.flush \(callback.go:34 -> callback.go:35\) \[lock-order\]`
	s.b.mu.Unlock()
	s.mu.Unlock()
}
