// etcd_bug: modeled on etcd's lessor and mvcc store (lessor.SetRangeDeleter,
// put-with-lease calling lessor.Attach).
// DEADLOCK (AB-BA): lease/lease.go:41 calls RangeDeleter.DeleteRange while
// holding Lessor.mu, and store.DeleteRange takes store.mu; meanwhile
// main.go:35 calls Lessor.Attach (takes Lessor.mu) while holding store.mu.
package main

import (
	"fmt"
	"sync"

	"example.com/recall/xpkg_etcd_bug/lease"
)

type store struct {
	mu   sync.Mutex
	data map[string]string
	le   *lease.Lessor
}

// DeleteRange implements lease.RangeDeleter.
func (s *store) DeleteRange(keys []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		delete(s.data, k)
	}
}

// putWithLease writes key and attaches it to lease id inside one txn.
func (s *store) putWithLease(key, val string, id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data[key] = val
	s.le.Attach(id, key)
}

func main() {
	s := &store{data: make(map[string]string), le: lease.NewLessor()}
	s.le.SetRangeDeleter(s)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < 50; i++ {
			s.putWithLease(fmt.Sprintf("/session/%d", i), "alive", 7)
		}
	}()
	go func() { defer wg.Done(); s.le.Revoke(7) }()
	wg.Wait()
	fmt.Println("keys left:", len(s.data))
}
