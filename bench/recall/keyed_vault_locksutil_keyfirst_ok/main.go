// Modeled on HashiCorp Vault's sdk/helper/locksutil: a fixed slice of 256
// lock entries; LockForKey hashes the key (md5 in Vault, fnv here) and
// returns a pointer into the slice. Vault's storage-facing code takes the
// per-key lock first and only then the backend/cache mutex.
//
// CORRECT: every path that needs both locks acquires LockForKey(key) before
// store.mu (writers with Lock, readers with RLock), and Snapshot holds only
// store.mu and never reaches for a key lock. The order is always
// key -> store. Two keys may hash to the same stripe, but no path holds more
// than one stripe, so collisions cannot form a cycle.
package main

import (
	"fmt"
	"hash/fnv"
	"sync"
)

const lockCount = 256

type LockEntry struct {
	sync.RWMutex
}

func CreateLocks() []*LockEntry {
	locks := make([]*LockEntry, lockCount)
	for i := range locks {
		locks[i] = new(LockEntry)
	}
	return locks
}

func LockIndexForKey(key string) uint8 {
	h := fnv.New32a()
	h.Write([]byte(key))
	return uint8(h.Sum32())
}

func LockForKey(locks []*LockEntry, key string) *LockEntry {
	return locks[LockIndexForKey(key)]
}

type Store struct {
	locks []*LockEntry
	mu    sync.Mutex
	data  map[string]string
	hits  int
}

func (s *Store) Put(key, val string) {
	lock := LockForKey(s.locks, key)
	lock.Lock()
	defer lock.Unlock()

	s.mu.Lock()
	s.data[key] = val
	s.mu.Unlock()
}

func (s *Store) Get(key string) (string, bool) {
	lock := LockForKey(s.locks, key)
	lock.RLock()
	defer lock.RUnlock()

	s.mu.Lock()
	defer s.mu.Unlock()
	s.hits++
	v, ok := s.data[key]
	return v, ok
}

// Snapshot takes only the store lock; it never waits for a key lock.
func (s *Store) Snapshot() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.data))
	for k, v := range s.data {
		out[k] = v
	}
	return out
}

func main() {
	s := &Store{locks: CreateLocks(), data: map[string]string{}}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			k := fmt.Sprintf("secret/%d", i%3)
			s.Put(k, "v")
			s.Get(k)
			s.Snapshot()
		}(i)
	}
	wg.Wait()
	fmt.Println(len(s.Snapshot()))
}
