// Pattern: sharded block cache (CockroachDB pebble internal/cache shards,
// groupcache-style LRU): entries live in per-shard maps, but the recency list
// links entries across shards, so e.next/e.prev may point into another
// shard. Each entry's links are guarded by its own shard's mutex; a splice
// locks every involved shard in ascending shard index order (a fixed global
// order), re-validating the links after locking.
package main

import (
	"fmt"
	"sync"
)

const nShards = 4

type Cache struct {
	shards [nShards]*Shard
	head   *Entry
}

type Shard struct {
	idx     int
	mu      sync.Mutex
	entries map[string]*Entry
}

type Entry struct {
	shard      *Shard
	key        string
	prev, next *Entry // may be in a different shard
}

func (c *Cache) lockMask(mask uint) {
	for i := 0; i < nShards; i++ { // ascending index: global lock order
		if mask&(1<<i) != 0 {
			c.shards[i].mu.Lock()
		}
	}
}

func (c *Cache) unlockMask(mask uint) {
	for i := nShards - 1; i >= 0; i-- {
		if mask&(1<<i) != 0 {
			c.shards[i].mu.Unlock()
		}
	}
}

func bit(e *Entry) uint { return 1 << e.shard.idx }

// readLinks reads e's links under e's shard lock only.
func readLinks(e *Entry) (p, n *Entry) {
	e.shard.mu.Lock()
	defer e.shard.mu.Unlock()
	return e.prev, e.next
}

// Touch moves e to the front of the cross-shard recency list.
func (c *Cache) Touch(e *Entry) {
	h := c.head
	for {
		p, n := readLinks(e)
		_, first := readLinks(h)
		if first == e {
			return
		}
		mask := bit(e) | bit(p) | bit(n) | bit(h) | bit(first)
		c.lockMask(mask)
		if e.prev == p && e.next == n && h.next == first && p.next == e && n.prev == e {
			p.next, n.prev = n, p     // unlink
			e.prev, e.next = h, first // relink at front
			h.next, first.prev = e, e
			c.unlockMask(mask)
			return
		}
		c.unlockMask(mask) // raced with another splice; retry
	}
}

func (c *Cache) Insert(key string) *Entry {
	s := c.shards[len(key)*7%nShards]
	e := &Entry{shard: s, key: key}
	h := c.head
	for {
		_, first := readLinks(h)
		mask := bit(e) | bit(h) | bit(first)
		c.lockMask(mask)
		if h.next == first {
			s.entries[key] = e
			e.prev, e.next = h, first
			h.next, first.prev = e, e
			c.unlockMask(mask)
			return e
		}
		c.unlockMask(mask)
	}
}

// Len walks the list holding one shard lock at a time.
func (c *Cache) Len() int {
	n := 0
	for _, e := readLinks(c.head); e != c.head; _, e = readLinks(e) {
		n++
	}
	return n
}

func main() {
	c := &Cache{}
	for i := range c.shards {
		c.shards[i] = &Shard{idx: i, entries: map[string]*Entry{}}
	}
	c.head = &Entry{shard: c.shards[0], key: "<head>"}
	c.head.prev, c.head.next = c.head, c.head
	var all []*Entry
	for i := 0; i < 16; i++ {
		all = append(all, c.Insert(fmt.Sprintf("blk%0*d", i%5+1, i)))
	}
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				c.Touch(all[(i*7+g*3)%len(all)])
			}
		}(g)
	}
	wg.Wait()
	fmt.Println("entries in list:", c.Len())
}
