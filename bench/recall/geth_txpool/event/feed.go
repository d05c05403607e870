// Package event is a minimal stand-in for go-ethereum's event.Feed.
package event

import "sync"

// Feed delivers values to every subscribed channel. Send blocks until all
// subscribers have received the value.
type Feed[T any] struct {
	mu   sync.Mutex
	subs []chan<- T
}

// Subscribe registers ch to receive future values.
func (f *Feed[T]) Subscribe(ch chan<- T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.subs = append(f.subs, ch)
}

// Send delivers v to all subscribers and returns how many received it.
func (f *Feed[T]) Send(v T) int {
	f.mu.Lock()
	subs := append([]chan<- T(nil), f.subs...)
	f.mu.Unlock()
	for _, ch := range subs {
		ch <- v
	}
	return len(subs)
}
