// Pattern: a method called with one shard's mutex held locks the mutex of a
// DIFFERENT shard of the same type, but only on the overflow branch. Shards
// only ever spill into the next shard (strictly increasing index), so locks of
// this type are always acquired in ascending order and never re-acquired.
// Modelled on sharded maps/caches (ristretto, badger's skiplist arenas,
// bigcache) with overflow into a neighbouring shard.
package main

import (
	"fmt"
	"hash/fnv"
	"sync"
)

type shard struct {
	id       int
	mu       sync.Mutex
	items    map[string]int
	capacity int
	next     *shard // nil for the last shard
	spilled  int
}

// insertLocked requires s.mu to be held by the caller.
func (s *shard) insertLocked(k string, v int) bool {
	if _, ok := s.items[k]; ok || len(s.items) < s.capacity {
		s.items[k] = v
		return true
	}
	if s.next == nil {
		return false // last shard: no other lock taken
	}
	nx := s.next // nx.id == s.id+1 > s.id: ascending order
	nx.mu.Lock()
	defer nx.mu.Unlock()
	s.spilled++
	return nx.insertLocked(k, v)
}

// lookupLocked requires s.mu held; walks forward hand-over-hand.
func (s *shard) lookupLocked(k string) (int, bool) {
	if v, ok := s.items[k]; ok {
		return v, true
	}
	if s.next == nil {
		return 0, false
	}
	s.next.mu.Lock()
	defer s.next.mu.Unlock()
	return s.next.lookupLocked(k)
}

type Map struct{ shards []*shard }

func NewMap(n, capacity int) *Map {
	m := &Map{}
	for i := 0; i < n; i++ {
		m.shards = append(m.shards, &shard{id: i, items: map[string]int{}, capacity: capacity})
	}
	for i := 0; i+1 < n; i++ {
		m.shards[i].next = m.shards[i+1]
	}
	return m
}

func (m *Map) home(k string) *shard {
	h := fnv.New32a()
	h.Write([]byte(k))
	return m.shards[int(h.Sum32())%len(m.shards)]
}

func (m *Map) Put(k string, v int) bool {
	s := m.home(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.insertLocked(k, v)
}

func (m *Map) Get(k string) (int, bool) {
	s := m.home(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lookupLocked(k)
}

func main() {
	m := NewMap(4, 12)
	var wg sync.WaitGroup
	var mu sync.Mutex
	rejected := 0
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 15; i++ {
				k := fmt.Sprintf("key-%d-%d", w, i)
				if !m.Put(k, i) {
					mu.Lock()
					rejected++
					mu.Unlock()
				}
				m.Get(k)
			}
		}(w)
	}
	wg.Wait()
	total := 0
	for _, s := range m.shards {
		s.mu.Lock()
		total += len(s.items)
		fmt.Printf("shard %d: %d items, spilled %d\n", s.id, len(s.items), s.spilled)
		s.mu.Unlock()
	}
	fmt.Println("total", total, "rejected", rejected)
}
