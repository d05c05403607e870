// Pattern B. Modelled on hashicorp/golang-lru / groupcache lru.Cache with an
// OnEvicted hook: the hook is assigned once in the constructor and invoked
// while s.mu is held, with the store passed in. The only hook the package
// installs touches atomics on the store, never s.mu.
package main

import (
	"container/list"
	"fmt"
	"sync"
	"sync/atomic"
)

type entry struct {
	key string
	val int
}

type store struct {
	mu      sync.Mutex
	cap     int
	ll      *list.List
	items   map[string]*list.Element
	onEvict func(s *store, key string, val int)

	evictions    atomic.Int64
	evictedBytes atomic.Int64
}

// recordEviction is the one and only onEvict implementation.
func recordEviction(s *store, key string, val int) {
	s.evictions.Add(1)
	s.evictedBytes.Add(int64(len(key) + val))
}

func newStore(capacity int) *store {
	return &store{
		cap:     capacity,
		ll:      list.New(),
		items:   make(map[string]*list.Element),
		onEvict: recordEviction,
	}
}

func (s *store) Add(key string, val int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.items[key]; ok {
		s.ll.MoveToFront(el)
		el.Value.(*entry).val = val
		return
	}
	s.items[key] = s.ll.PushFront(&entry{key, val})
	for s.ll.Len() > s.cap {
		old := s.ll.Back()
		e := old.Value.(*entry)
		s.ll.Remove(old)
		delete(s.items, e.key)
		if s.onEvict != nil {
			s.onEvict(s, e.key, e.val) // called with s.mu held
		}
	}
}

func (s *store) Get(key string) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.items[key]; ok {
		s.ll.MoveToFront(el)
		return el.Value.(*entry).val, true
	}
	return 0, false
}

func (s *store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ll.Len()
}

func main() {
	s := newStore(32)
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 400; i++ {
				k := fmt.Sprintf("k%d", (g*31+i)%97)
				if _, ok := s.Get(k); !ok {
					s.Add(k, i)
				}
				_ = s.evictions.Load() // readers poll stats without the lock
			}
		}(g)
	}
	wg.Wait()
	fmt.Println("len", s.Len(), "evictions>0", s.evictions.Load() > 0, "bytes>0", s.evictedBytes.Load() > 0)
}
