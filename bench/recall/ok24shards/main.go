// Pattern: a sharded key-value store whose shards are all the same type and
// are created in a loop; moving a key between two shards locks both shards
// in ascending shard-ID order. A nil-checked rebalance hook is invoked after
// both shard locks are released.
package main

import (
	"fmt"
	"hash/fnv"
	"os"
	"sync"
)

type shard struct {
	id   int
	mu   sync.Mutex
	data map[string]int
}

type Store struct {
	shards  []*shard
	onMove  func(key string, from, to int)
	movesMu sync.Mutex
	moves   int
}

func NewStore(n int) *Store {
	s := &Store{}
	for i := 0; i < n; i++ {
		s.shards = append(s.shards, &shard{id: i, data: make(map[string]int)})
	}
	return s
}

func (s *Store) SetMoveHook(fn func(key string, from, to int)) { s.onMove = fn }

func (s *Store) home(key string) *shard {
	h := fnv.New32a()
	h.Write([]byte(key))
	return s.shards[int(h.Sum32())%len(s.shards)]
}

func (s *Store) Put(key string, v int) {
	sh := s.home(key)
	sh.mu.Lock()
	sh.data[key] = v
	sh.mu.Unlock()
}

func (s *Store) Sum() int {
	total := 0
	for _, sh := range s.shards {
		sh.mu.Lock()
		for _, v := range sh.data {
			total += v
		}
		sh.mu.Unlock()
	}
	return total
}

// lockPair locks two distinct shards in ascending ID order.
func lockPair(a, b *shard) (first, second *shard) {
	if a.id < b.id {
		first, second = a, b
	} else {
		first, second = b, a
	}
	first.mu.Lock()
	second.mu.Lock()
	return first, second
}

// Move transfers the value stored under key from shard `from` to shard `to`
// (bypassing the hash placement, as a rebalancer would).
func (s *Store) Move(key string, from, to int) bool {
	if from == to {
		return false
	}
	src, dst := s.shards[from], s.shards[to]
	first, second := lockPair(src, dst)
	v, ok := src.data[key]
	if ok {
		delete(src.data, key)
		dst.data[key] += v
	}
	second.mu.Unlock()
	first.mu.Unlock()

	if ok && s.onMove != nil {
		s.onMove(key, from, to)
	}
	return ok
}

func (s *Store) findShard(key string) int {
	for _, sh := range s.shards {
		sh.mu.Lock()
		_, ok := sh.data[key]
		sh.mu.Unlock()
		if ok {
			return sh.id
		}
	}
	return -1
}

func main() {
	store := NewStore(6)
	store.SetMoveHook(func(key string, from, to int) {
		store.movesMu.Lock()
		store.moves++
		store.movesMu.Unlock()
		_ = store.Sum()
	})

	keys := make([]string, 30)
	for i := range keys {
		keys[i] = fmt.Sprintf("user-%d", i)
		store.Put(keys[i], 10)
	}
	want := store.Sum()

	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				k := keys[(w*7+i)%len(keys)]
				from := store.findShard(k)
				if from < 0 {
					continue
				}
				to := (from + w + 1) % len(store.shards)
				store.Move(k, from, to)
			}
		}(w)
	}
	wg.Wait()

	if got := store.Sum(); got != want {
		fmt.Println("sum mismatch", got, want)
		os.Exit(1)
	}
	store.movesMu.Lock()
	fmt.Println("sum ok:", want, "moves:", store.moves)
	store.movesMu.Unlock()
}
