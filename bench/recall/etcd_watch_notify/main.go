// Modelled on etcd server/storage/mvcc/watchable_store.go: notify() holds the
// store lock while iterating the synced watcher group and calls w.send() on each
// watcher. send() only takes the watcher's own mutex (a different object), and
// no code path takes the watcher lock and then the store lock, so the order
// store.mu -> watcher.mu is consistent.
package main

import (
	"fmt"
	"sync"
)

type event struct {
	key string
	rev int64
}

type watcher struct {
	id      int64
	key     string
	mu      sync.Mutex // protects pending and victim
	pending []event
	victim  bool
	ch      chan []event
}

// send delivers the events without blocking; if the channel is full the
// watcher becomes a victim and keeps the events buffered. Only w.mu is taken.
func (w *watcher) send(evs []event) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending = append(w.pending, evs...)
	select {
	case w.ch <- w.pending:
		w.pending = nil
		return true
	default:
		w.victim = true
		return false
	}
}

type watchableStore struct {
	mu      sync.RWMutex
	rev     int64
	synced  map[int64]*watcher
	victims int
	nextID  int64
}

func newWatchableStore() *watchableStore {
	return &watchableStore{synced: make(map[int64]*watcher)}
}

func (s *watchableStore) watch(key string) *watcher {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	w := &watcher{id: s.nextID, key: key, ch: make(chan []event, 4)}
	s.synced[w.id] = w
	return w
}

func (s *watchableStore) cancel(w *watcher) {
	s.mu.Lock()
	delete(s.synced, w.id)
	s.mu.Unlock()
}

// put bumps the revision and notifies watchers while holding s.mu.
func (s *watchableStore) put(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rev++
	s.notifyLocked(event{key: key, rev: s.rev})
}

// notifyLocked requires s.mu held. It calls w.send for every matching
// watcher; send locks w.mu, never s.mu.
func (s *watchableStore) notifyLocked(ev event) {
	for _, w := range s.synced {
		if w.key != ev.key {
			continue
		}
		if !w.send([]event{ev}) {
			s.victims++
		}
	}
}

func main() {
	s := newWatchableStore()
	w1 := s.watch("a")
	w2 := s.watch("b")

	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 10; j++ {
				if (i+j)%2 == 0 {
					s.put("a")
				} else {
					s.put("b")
				}
			}
		}(i)
	}
	wg.Wait()
	s.cancel(w2)

	got := 0
	for done := false; !done; {
		select {
		case evs := <-w1.ch:
			got += len(evs)
		default:
			done = true
		}
	}
	s.mu.RLock()
	fmt.Println("rev", s.rev, "victims", s.victims, "received", got)
	s.mu.RUnlock()
}
