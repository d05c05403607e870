// Pattern: Kubernetes client-go tools/cache threadSafeMap-style store with
// a RWMutex and internal helpers taking `needLock bool` (the same shape as
// Consul agent/local State helpers that are called with the lock held).
// Public readers call get(key, true) -> RLock; Add/Delete take the write lock
// and then call get(key, false) / indexKeys(..., false), so the RWMutex is
// never re-acquired (RLock under Lock would deadlock).
package main

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

type Store struct {
	mu    sync.RWMutex
	items map[string]string
	index map[string]map[string]struct{} // namespace -> keys
}

func NewStore() *Store {
	return &Store{items: map[string]string{}, index: map[string]map[string]struct{}{}}
}

func namespaceOf(key string) string {
	ns, _, _ := strings.Cut(key, "/")
	return ns
}

func (s *Store) get(key string, needLock bool) (string, bool) {
	if needLock {
		s.mu.RLock()
		defer s.mu.RUnlock()
	}
	v, ok := s.items[key]
	return v, ok
}

func (s *Store) indexKeys(ns string, needLock bool) []string {
	if needLock {
		s.mu.RLock()
		defer s.mu.RUnlock()
	}
	var keys []string
	for k := range s.index[ns] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (s *Store) Get(key string) (string, bool)  { return s.get(key, true) }
func (s *Store) ByNamespace(ns string) []string { return s.indexKeys(ns, true) }

func (s *Store) Add(key, val string) (old string, existed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, existed = s.get(key, false)
	s.items[key] = val
	ns := namespaceOf(key)
	if s.index[ns] == nil {
		s.index[ns] = map[string]struct{}{}
	}
	s.index[ns][key] = struct{}{}
	return old, existed
}

// DeleteNamespace removes all objects in ns; lists them with needLock=false.
func (s *Store) DeleteNamespace(ns string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := s.indexKeys(ns, false)
	for _, k := range keys {
		if _, ok := s.get(k, false); ok {
			delete(s.items, k)
		}
	}
	delete(s.index, ns)
	return len(keys)
}

func main() {
	s := NewStore()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				ns := fmt.Sprintf("ns%d", i%3)
				s.Add(fmt.Sprintf("%s/pod-%d-%d", ns, g, i), "v")
				_, _ = s.Get(ns + "/pod-0-0")
				_ = s.ByNamespace(ns)
				if i == 10 && g == 0 {
					s.DeleteNamespace("ns1")
				}
			}
		}(g)
	}
	wg.Wait()
	fmt.Println(len(s.ByNamespace("ns0")), len(s.ByNamespace("ns2")))
}
