// Project: juju/pubsub (SimpleHub, used by juju's central hub)
// Bug: the subscriber loop invoked the handler callback while holding
// sub.mutex. A handler that unsubscribed itself (hub.Unsubscribe -> hub.mutex)
// raced with Publish, which holds hub.mutex while queueing to every matching
// subscriber kept in the hub's map (sub.notify -> sub.mutex): AB-BA between
// the hub lock and the subscriber lock through the stored handler callback.
// Fix: pop the pending callback under sub.mutex, release it, then call the
// handler.

package main

import (
	"fmt"
	"sync"
	"time"
)

type handlerCallback struct {
	topic string
	data  map[string]interface{}
}

type subscriber struct {
	id      int
	topic   string
	handler func(topic string, data map[string]interface{})

	mutex   sync.Mutex
	pending []*handlerCallback
	closed  bool
	data    chan struct{}
	done    chan struct{}
}

func (s *subscriber) notify(cb *handlerCallback) {
	s.mutex.Lock()
	defer s.mutex.Unlock()
	if s.closed {
		return
	}
	s.pending = append(s.pending, cb)
	select {
	case s.data <- struct{}{}:
	default:
	}
}

func (s *subscriber) close() {
	s.mutex.Lock()
	defer s.mutex.Unlock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
}

func (s *subscriber) loop() {
	for {
		select {
		case <-s.done:
			return
		case <-s.data:
		}
		s.mutex.Lock()
		for len(s.pending) > 0 && !s.closed {
			cb := s.pending[0]
			s.pending = s.pending[1:]
			s.handler(cb.topic, cb.data)
		}
		s.mutex.Unlock()
	}
}

type SimpleHub struct {
	mutex       sync.Mutex
	subscribers map[int]*subscriber
	idx         int
	published   int
}

func NewSimpleHub() *SimpleHub {
	return &SimpleHub{subscribers: map[int]*subscriber{}}
}

func (h *SimpleHub) Subscribe(topic string, handler func(string, map[string]interface{})) int {
	h.mutex.Lock()
	defer h.mutex.Unlock()
	h.idx++
	sub := &subscriber{id: h.idx, topic: topic, handler: handler,
		data: make(chan struct{}, 1), done: make(chan struct{})}
	h.subscribers[sub.id] = sub
	go sub.loop()
	return sub.id
}

func (h *SimpleHub) Unsubscribe(id int) {
	h.mutex.Lock()
	defer h.mutex.Unlock()
	if sub, ok := h.subscribers[id]; ok {
		sub.close()
		delete(h.subscribers, id)
	}
}

func (h *SimpleHub) Publish(topic string, data map[string]interface{}) {
	h.mutex.Lock()
	defer h.mutex.Unlock()
	h.published++
	for _, sub := range h.subscribers {
		if sub.topic == topic {
			sub.notify(&handlerCallback{topic: topic, data: data})
		}
	}
}

func main() {
	hub := NewSimpleHub()
	var id int
	finished := make(chan struct{})
	id = hub.Subscribe("model.migration", func(topic string, data map[string]interface{}) {
		// The migration minion acts on the phase change and then stops
		// listening (simulated work first).
		time.Sleep(50 * time.Millisecond)
		hub.Unsubscribe(id)
		close(finished)
	})

	hub.Publish("model.migration", map[string]interface{}{"phase": "QUIESCE"})
	time.Sleep(10 * time.Millisecond)
	hub.Publish("model.migration", map[string]interface{}{"phase": "IMPORT"})
	<-finished
	fmt.Println("published:", hub.published)
}
