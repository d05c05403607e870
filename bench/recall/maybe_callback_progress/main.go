// Pattern: a watch callback is invoked while the store holds s.mu. The
// callback's implementation calls back into the store (which locks s.mu) only
// for Progress events, and Progress events are never dispatched under s.mu:
// RequestProgress copies the watcher list and releases s.mu before notifying.
// Modelled on etcd's watchable store / progress notifications.
package main

import (
	"fmt"
	"sync"
)

type EventType int

const (
	EvPut EventType = iota
	EvDelete
	EvProgress
)

type Event struct {
	Type     EventType
	Key, Val string
	Rev      int64
}

type Store struct {
	mu       sync.Mutex
	data     map[string]string
	rev      int64
	watchers []func(Event)
}

func (s *Store) Watch(fn func(Event)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watchers = append(s.watchers, fn)
}

// notifyLocked: s.mu held. Only EvPut/EvDelete are passed here.
func (s *Store) notifyLocked(ev Event) {
	for _, w := range s.watchers {
		w(ev)
	}
}

func (s *Store) Put(k, v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rev++
	s.data[k] = v
	s.notifyLocked(Event{Type: EvPut, Key: k, Val: v, Rev: s.rev})
}

func (s *Store) Delete(k string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rev++
	delete(s.data, k)
	s.notifyLocked(Event{Type: EvDelete, Key: k, Rev: s.rev})
}

func (s *Store) Rev() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rev
}

// RequestProgress dispatches outside s.mu.
func (s *Store) RequestProgress() {
	s.mu.Lock()
	rev := s.rev
	ws := make([]func(Event), len(s.watchers))
	copy(ws, s.watchers)
	s.mu.Unlock()
	for _, w := range ws {
		w(Event{Type: EvProgress, Rev: rev})
	}
}

// Mirror keeps a replica. Lock order: Store.mu -> Mirror.mu; Mirror.mu is
// never held while calling into the Store.
type Mirror struct {
	mu      sync.Mutex
	data    map[string]string
	lastRev int64
	lagged  int
}

func (m *Mirror) handler(s *Store) func(Event) {
	return func(ev Event) {
		switch ev.Type {
		case EvPut, EvDelete:
			m.mu.Lock()
			if ev.Type == EvPut {
				m.data[ev.Key] = ev.Val
			} else {
				delete(m.data, ev.Key)
			}
			m.lastRev = ev.Rev
			m.mu.Unlock()
		case EvProgress:
			cur := s.Rev() // locks s.mu: only reachable outside s.mu
			m.mu.Lock()
			if m.lastRev < cur {
				m.lagged++
			}
			m.mu.Unlock()
		}
	}
}

func main() {
	s := &Store{data: map[string]string{}}
	m := &Mirror{data: map[string]string{}}
	s.Watch(m.handler(s))

	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				k := fmt.Sprintf("k%d", i%10)
				s.Put(k, fmt.Sprint(w, i))
				if i%7 == 0 {
					s.Delete(k)
				}
			}
		}(w)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 50; i++ {
			s.RequestProgress()
		}
	}()
	wg.Wait()
	s.RequestProgress()
	storeRev := s.Rev() // not under m.mu: keep Store.mu -> Mirror.mu order
	m.mu.Lock()
	fmt.Println("mirror rev:", m.lastRev, "store rev:", storeRev, "keys:", len(m.data), "lagged:", m.lagged)
	m.mu.Unlock()
}
