// Package exchange is an event exchange modeled on containerd's events/exchange.
package exchange

import "sync"

// Handler receives events published on a topic.
type Handler interface {
	Handle(topic, payload string)
}

// Exchange routes published events to subscribed handlers.
type Exchange struct {
	mu   sync.Mutex
	subs map[string][]Handler
}

// New returns an empty exchange.
func New() *Exchange { return &Exchange{subs: make(map[string][]Handler)} }

// Subscribe registers h for topic.
func (e *Exchange) Subscribe(topic string, h Handler) {
	e.mu.Lock()
	e.subs[topic] = append(e.subs[topic], h)
	e.mu.Unlock()
}

// Publish delivers payload to the topic's handlers while holding e.mu.
func (e *Exchange) Publish(topic, payload string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, h := range e.subs[topic] {
		h.Handle(topic, payload)
	}
}
