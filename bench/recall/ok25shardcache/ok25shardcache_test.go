// Pattern: sharded balance cache. Add locks a shard and then reads the entry
// through peekLocked, a helper that resolves the shard again from the same key
// and reads its map without locking. Transfer locks two shards in ascending
// index order. A Logger is called under a shard lock with a shard operand whose
// String method reads only an immutable id and an atomic counter.
package ok25shardcache

import (
	"fmt"
	"hash/fnv"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
)

type Logger interface {
	Printf(format string, args ...any)
}

type memLogger struct {
	mu    sync.Mutex
	lines []string
}

func (l *memLogger) Printf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.mu.Lock()
	l.lines = append(l.lines, msg)
	l.mu.Unlock()
}

func (l *memLogger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}

type shard struct {
	mu    sync.Mutex
	id    int
	items map[string]int
	ops   atomic.Int64
}

// String reads only immutable and atomic fields; it never takes s.mu.
func (s *shard) String() string {
	return fmt.Sprintf("shard-%d(ops=%d)", s.id, s.ops.Load())
}

type Cache struct {
	shards []*shard
	log    Logger
}

func NewCache(n int, log Logger) *Cache {
	c := &Cache{log: log}
	for i := 0; i < n; i++ {
		c.shards = append(c.shards, &shard{id: i, items: make(map[string]int)})
	}
	return c
}

func (c *Cache) index(key string) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(len(c.shards)))
}

func (c *Cache) shardFor(key string) *shard { return c.shards[c.index(key)] }

// peekLocked reads key from its shard. The caller must hold that shard's mu.
func (c *Cache) peekLocked(key string) int {
	return c.shardFor(key).items[key]
}

// setLocked writes key into its shard. The caller must hold that shard's mu.
func (c *Cache) setLocked(key string, v int) {
	s := c.shardFor(key)
	s.items[key] = v
	s.ops.Add(1)
}

func (c *Cache) Add(key string, delta int) int {
	s := c.shardFor(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	v := c.peekLocked(key) + delta
	c.setLocked(key, v)
	c.log.Printf("add %q %+d on %v", key, delta, s)
	return v
}

func (c *Cache) Get(key string) int {
	s := c.shardFor(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	return c.peekLocked(key)
}

// Transfer moves n units from one key to another. When the keys live in
// different shards, both shards are locked lowest index first.
func (c *Cache) Transfer(from, to string, n int) bool {
	i, j := c.index(from), c.index(to)
	if i == j {
		s := c.shards[i]
		s.mu.Lock()
		defer s.mu.Unlock()
		return c.moveLocked(from, to, n)
	}
	lo, hi := i, j
	if lo > hi {
		lo, hi = hi, lo
	}
	c.shards[lo].mu.Lock()
	defer c.shards[lo].mu.Unlock()
	c.shards[hi].mu.Lock()
	defer c.shards[hi].mu.Unlock()
	return c.moveLocked(from, to, n)
}

// moveLocked requires the shard locks of both keys to be held.
func (c *Cache) moveLocked(from, to string, n int) bool {
	if from == to {
		return true
	}
	have := c.peekLocked(from)
	if have < n {
		c.log.Printf("transfer %q->%q refused: have %d want %d (%v)", from, to, have, n, c.shardFor(from))
		return false
	}
	c.setLocked(from, have-n)
	c.setLocked(to, c.peekLocked(to)+n)
	return true
}

func (c *Cache) Total(keys []string) int {
	sum := 0
	for _, k := range keys {
		sum += c.Get(k)
	}
	return sum
}

func TestShardedTransfers(t *testing.T) {
	log := &memLogger{}
	c := NewCache(8, log)
	keys := make([]string, 32)
	for i := range keys {
		keys[i] = fmt.Sprintf("acct-%02d", i)
		c.Add(keys[i], 100)
	}
	want := 100 * len(keys)

	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			r := rand.New(rand.NewSource(seed))
			for i := 0; i < 500; i++ {
				a, b := keys[r.Intn(len(keys))], keys[r.Intn(len(keys))]
				c.Transfer(a, b, r.Intn(30))
				if i%50 == 0 {
					c.Add(a, 0)
				}
			}
		}(int64(w))
	}
	wg.Wait()

	if got := c.Total(keys); got != want {
		t.Fatalf("total = %d, want %d", got, want)
	}
	if log.count() < len(keys) {
		t.Fatalf("expected at least %d log lines, got %d", len(keys), log.count())
	}
}
