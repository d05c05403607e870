// Modelled on etcd's mvcc watchableStore (server/storage/mvcc/watchable_store.go):
// when a watcher's channel is full it is moved to the victim set and a
// "victim" callback fires while s.mu is held. The callback only takes the
// metrics mutex, which is always acquired after s.mu and never before it.

package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

type watchEvent struct {
	key string
	rev int64
}

type watcher struct {
	id  int64
	key string
	ch  chan watchEvent
}

type watchableStore struct {
	mu       sync.Mutex
	rev      int64
	synced   map[int64]*watcher
	victims  []*watcher
	onVictim atomic.Value // func(w *watcher, pending int)

	metricsMu    sync.Mutex
	victimByKey  map[string]int
	totalVictims int
}

func newWatchableStore() *watchableStore {
	return &watchableStore{synced: make(map[int64]*watcher), victimByKey: make(map[string]int)}
}

func (s *watchableStore) SetVictimCallback(cb func(w *watcher, pending int)) {
	s.onVictim.Store(cb)
}

// recordVictim is the default callback; it only touches metricsMu.
func (s *watchableStore) recordVictim(w *watcher, pending int) {
	s.metricsMu.Lock()
	s.victimByKey[w.key]++
	s.totalVictims++
	s.metricsMu.Unlock()
}

func (s *watchableStore) Watch(id int64, key string) *watcher {
	w := &watcher{id: id, key: key, ch: make(chan watchEvent, 4)}
	s.mu.Lock()
	s.synced[id] = w
	s.mu.Unlock()
	return w
}

func (s *watchableStore) Put(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rev++
	ev := watchEvent{key: key, rev: s.rev}
	for id, w := range s.synced {
		if w.key != key {
			continue
		}
		select {
		case w.ch <- ev:
		default:
			delete(s.synced, id)
			s.victims = append(s.victims, w)
			if cb, ok := s.onVictim.Load().(func(*watcher, int)); ok {
				cb(w, len(s.victims))
			}
		}
	}
}

// Stats takes both locks in the same order as Put: s.mu, then metricsMu.
func (s *watchableStore) Stats() (synced, victims, recorded int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.metricsMu.Lock()
	defer s.metricsMu.Unlock()
	return len(s.synced), len(s.victims), s.totalVictims
}

func main() {
	s := newWatchableStore()
	s.SetVictimCallback(s.recordVictim)

	keys := []string{"/registry/pods", "/registry/nodes", "/registry/leases"}
	var watchers []*watcher
	for i := 0; i < 9; i++ {
		watchers = append(watchers, s.Watch(int64(i), keys[i%len(keys)]))
	}

	var wg sync.WaitGroup
	// Slow consumers drain only a couple of events, forcing some victims.
	var drained atomic.Int64
	for i, w := range watchers {
		if i%3 == 0 {
			continue
		}
		wg.Add(1)
		go func(w *watcher) {
			defer wg.Done()
			for j := 0; j < 2; j++ {
				<-w.ch
				drained.Add(1)
			}
		}(w)
	}
	var putters sync.WaitGroup
	for p := 0; p < 3; p++ {
		putters.Add(1)
		go func(p int) {
			defer putters.Done()
			for i := 0; i < 20; i++ {
				s.Put(keys[(p+i)%len(keys)])
				if i%5 == 0 {
					s.Stats()
				}
			}
		}(p)
	}
	putters.Wait()
	wg.Wait()

	synced, victims, recorded := s.Stats()
	fmt.Printf("synced=%d victims=%d recorded=%d drained=%d\n", synced, victims, recorded, drained.Load())
	if victims != recorded {
		panic("metrics mismatch")
	}
}
