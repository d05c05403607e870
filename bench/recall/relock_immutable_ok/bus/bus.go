// Package bus is a minimal synchronous event bus. Publish holds the bus
// mutex while it invokes listeners (like many in-process buses do), and the
// Event it passes carries a back-pointer to the Bus.
package bus

import (
	"sync"
	"sync/atomic"
)

// Event carries its originating Bus.
type Event struct {
	Bus   *Bus
	Topic string
}

// Listener is implemented by importers.
type Listener interface {
	OnEvent(ev Event)
}

// Bus dispatches events to listeners.
type Bus struct {
	name      string       // immutable after New
	Published atomic.Int64 // safe to read from listeners

	mu        sync.Mutex
	listeners []Listener
}

// New creates a named Bus.
func New(name string) *Bus { return &Bus{name: name} }

// Name returns the immutable bus name; it takes no lock.
func (b *Bus) Name() string { return b.name }

// Subscribe registers l.
func (b *Bus) Subscribe(l Listener) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.listeners = append(b.listeners, l)
}

// Publish delivers ev to every listener while holding mu.
func (b *Bus) Publish(topic string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.Published.Add(1)
	for _, l := range b.listeners {
		l.OnEvent(Event{Bus: b, Topic: topic}) // called under mu
	}
}
