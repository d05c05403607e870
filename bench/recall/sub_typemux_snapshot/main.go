// Pattern: go-ethereum event TypeMux.Post: the subscriber slice is copied while
// holding the mux lock and events are delivered after the lock is released, so
// subscribers may freely call back into the mux while handling an event.
package main

import (
	"fmt"
	"sync"
)

type NewHeadEvent struct {
	Number uint64
	Hash   string
}

type Subscription struct {
	mux *TypeMux
	id  int
	ch  chan NewHeadEvent
}

type TypeMux struct {
	mu      sync.RWMutex
	subs    []*Subscription
	posted  uint64
	nextID  int
	stopped bool
}

func (m *TypeMux) Subscribe() *Subscription {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nextID++
	s := &Subscription{mux: m, id: m.nextID, ch: make(chan NewHeadEvent)}
	m.subs = append(m.subs, s)
	return s
}

// Post delivers ev to every subscriber. The lock only protects the snapshot.
func (m *TypeMux) Post(ev NewHeadEvent) bool {
	m.mu.Lock()
	if m.stopped {
		m.mu.Unlock()
		return false
	}
	m.posted++
	subs := make([]*Subscription, len(m.subs))
	copy(subs, m.subs)
	m.mu.Unlock()

	for _, s := range subs {
		s.ch <- ev
	}
	return true
}

func (m *TypeMux) Posted() uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.posted
}

func (m *TypeMux) NumSubscribers() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.subs)
}

// Stop closes all subscription channels. Called by the single poster after its
// last Post has returned.
func (m *TypeMux) Stop() {
	m.mu.Lock()
	m.stopped = true
	subs := m.subs
	m.subs = nil
	m.mu.Unlock()
	for _, s := range subs {
		close(s.ch)
	}
}

func (s *Subscription) Chan() <-chan NewHeadEvent { return s.ch }

func main() {
	mux := &TypeMux{}
	var wg sync.WaitGroup
	results := make([]uint64, 3)

	for i := 0; i < 3; i++ {
		sub := mux.Subscribe()
		wg.Add(1)
		go func(idx int, sub *Subscription) {
			defer wg.Done()
			var last uint64
			for ev := range sub.Chan() {
				// Call back into the mux while handling the event.
				if p := sub.mux.Posted(); p < ev.Number {
					panic("posted counter behind delivered event")
				}
				_ = sub.mux.NumSubscribers()
				last = ev.Number
			}
			results[idx] = last
		}(i, sub)
	}

	for n := uint64(1); n <= 20; n++ {
		mux.Post(NewHeadEvent{Number: n, Hash: fmt.Sprintf("0x%04x", n*7919)})
	}
	mux.Stop()
	wg.Wait()
	fmt.Println("posted:", mux.Posted(), "last seen per subscriber:", results)
}
