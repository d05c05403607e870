// Package bus is a synchronous event bus that passes itself to listeners
// and calls them while holding its mutex.
package bus

import "sync"

// Event is a published message.
type Event struct {
	Topic   string
	Payload string
}

// Listener receives the Bus itself plus the event.
type Listener interface {
	OnEvent(b *Bus, ev Event)
}

// Bus fans events out to listeners.
type Bus struct {
	mu        sync.Mutex
	listeners map[string][]Listener
}

// New returns an empty Bus.
func New() *Bus { return &Bus{listeners: map[string][]Listener{}} }

// Subscribe registers l for topic (takes mu).
func (b *Bus) Subscribe(topic string, l Listener) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.listeners[topic] = append(b.listeners[topic], l)
}

// Publish delivers ev to every listener of its topic with mu held.
func (b *Bus) Publish(ev Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range b.listeners[ev.Topic] {
		l.OnEvent(b, ev) // CALL UNDER LOCK
	}
}
