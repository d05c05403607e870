package main

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

type event interface{}

type putEvent struct{ key, val string }
type deleteEvent struct{ key string }
type compactEvent struct{ prefix string }

// Store keeps key/value pairs and a secondary prefix index. Mutations are
// applied through apply, which is invoked with s.mu held for put/delete
// (from Put/Delete) and without it for compaction (from the maintenance
// loop), where the case acquires the lock itself.
type Store struct {
	mu    sync.Mutex
	data  map[string]string
	index map[string]int // prefix -> count
	log   []string
}

func NewStore() *Store {
	return &Store{data: map[string]string{}, index: map[string]int{}}
}

func prefixOf(k string) string {
	if i := strings.IndexByte(k, '/'); i >= 0 {
		return k[:i]
	}
	return k
}

func (s *Store) apply(ev event) {
	switch e := ev.(type) {
	case *putEvent:
		if _, ok := s.data[e.key]; !ok {
			s.index[prefixOf(e.key)]++
		}
		s.data[e.key] = e.val
		s.log = append(s.log, "put "+e.key)
	case *deleteEvent:
		if _, ok := s.data[e.key]; ok {
			delete(s.data, e.key)
			s.index[prefixOf(e.key)]--
		}
		s.log = append(s.log, "del "+e.key)
	case *compactEvent:
		s.mu.Lock()
		defer s.mu.Unlock()
		for p, n := range s.index {
			if n == 0 && strings.HasPrefix(p, e.prefix) {
				delete(s.index, p)
			}
		}
		s.log = s.log[:0]
	}
}

func (s *Store) Put(k, v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apply(&putEvent{key: k, val: v})
}

func (s *Store) Delete(k string) {
	s.mu.Lock()
	s.apply(&deleteEvent{key: k})
	s.mu.Unlock()
}

func (s *Store) Prefixes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for p := range s.index {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func main() {
	s := NewStore()
	compactions := make(chan string)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for p := range compactions {
			s.apply(&compactEvent{prefix: p})
		}
	}()

	var wg sync.WaitGroup
	for _, tenant := range []string{"alpha", "beta", "gamma"} {
		wg.Add(1)
		go func(t string) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				k := fmt.Sprintf("%s/%d", t, i)
				s.Put(k, "v")
				if t != "alpha" {
					s.Delete(k)
				}
			}
		}(tenant)
	}
	for i := 0; i < 5; i++ {
		compactions <- "b"
	}
	wg.Wait()
	compactions <- ""
	close(compactions)
	<-done
	fmt.Println("prefixes:", s.Prefixes())
}
