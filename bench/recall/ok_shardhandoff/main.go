// Pattern C. Modelled on bigcache/freecache-style sharded maps: lockShard
// locks inside an `if` and deliberately returns with the shard lock held
// (documented; every caller unlocks), unlocking explicitly before each early
// return; Compact locks inside a branch with a deferred unlock in that branch.
package main

import (
	"fmt"
	"hash/fnv"
	"sync"
	"sync/atomic"
)

type shard struct {
	mu     sync.Mutex
	frozen bool
	m      map[string]int
}

type table struct {
	closed     atomic.Bool
	honorFreez bool
	shards     [8]*shard
}

func newTable(honorFreeze bool) *table {
	t := &table{honorFreez: honorFreeze}
	for i := range t.shards {
		t.shards[i] = &shard{m: make(map[string]int)}
	}
	return t
}

func (t *table) pick(key string) *shard {
	h := fnv.New32a()
	h.Write([]byte(key))
	return t.shards[h.Sum32()%uint32(len(t.shards))]
}

// lockShard returns key's shard with s.mu HELD; the caller must unlock it.
// It returns nil with no lock held if the table is closed or shard frozen.
func (t *table) lockShard(key string) *shard {
	if t.closed.Load() {
		return nil // before any Lock
	}
	s := t.pick(key)
	if t.honorFreez {
		s.mu.Lock()
		if s.frozen {
			s.mu.Unlock()
			return nil
		}
		return s // handed to caller locked
	}
	s.mu.Lock()
	return s
}

func (t *table) Incr(key string) bool {
	s := t.lockShard(key)
	if s == nil {
		return false
	}
	s.m[key]++
	s.mu.Unlock()
	return true
}

// Compact freezes or thaws one shard; it locks only if the index is valid.
func (t *table) Compact(i int, freeze bool) int {
	if i < 0 || i >= len(t.shards) {
		return -1
	}
	if s := t.shards[i]; s != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.frozen == freeze {
			return len(s.m)
		}
		s.frozen = freeze
		for k, v := range s.m {
			if v == 0 {
				delete(s.m, k)
			}
		}
		return len(s.m)
	}
	return 0
}

func main() {
	tables := []*table{newTable(true), newTable(false)}
	var ok atomic.Int64
	var wg sync.WaitGroup
	for _, t := range tables {
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func(t *table, g int) {
				defer wg.Done()
				for i := 0; i < 300; i++ {
					if t.Incr(fmt.Sprintf("key-%d", (g*13+i)%41)) {
						ok.Add(1)
					}
					if g == 0 && i%30 == 0 {
						t.Compact(i%10, i%60 == 0)
					}
				}
			}(t, g)
		}
	}
	wg.Wait()
	tables[1].closed.Store(true)
	if tables[1].Incr("x") {
		panic("write after close")
	}
	fmt.Println("successful incrs", ok.Load() > 0)
}
