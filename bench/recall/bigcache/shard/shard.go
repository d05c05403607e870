// Package shard is a striped cache in the style of allegro/bigcache: keys
// hash to one of N shards, each with its own RWMutex. At most one shard
// lock is held at any time, including in whole-cache operations.
package shard

import (
	"hash/fnv"
	"sync"
)

type cacheShard struct {
	lock    sync.RWMutex
	items   map[string][]byte
	hits    int
	misses  int
	evicted int
}

// Cache is a fixed-size array of shards.
type Cache struct {
	shards []*cacheShard
	mask   uint64
}

// New returns a cache with n shards; n must be a power of two.
func New(n int) *Cache {
	c := &Cache{shards: make([]*cacheShard, n), mask: uint64(n - 1)}
	for i := range c.shards {
		c.shards[i] = &cacheShard{items: make(map[string][]byte)}
	}
	return c
}

func (c *Cache) getShard(key string) *cacheShard {
	h := fnv.New64a()
	h.Write([]byte(key))
	return c.shards[h.Sum64()&c.mask]
}

func (c *Cache) Set(key string, v []byte) {
	s := c.getShard(key)
	s.lock.Lock()
	s.items[key] = v
	s.lock.Unlock()
}

func (c *Cache) Get(key string) ([]byte, bool) {
	s := c.getShard(key)
	s.lock.RLock()
	v, ok := s.items[key]
	s.lock.RUnlock()
	// Stats are written under the write lock of the same shard, separately.
	s.lock.Lock()
	if ok {
		s.hits++
	} else {
		s.misses++
	}
	s.lock.Unlock()
	return v, ok
}

// Rename moves a value between keys that may live in different shards.
// The source stripe is released before the destination stripe is taken.
func (c *Cache) Rename(from, to string) bool {
	src := c.getShard(from)
	src.lock.Lock()
	v, ok := src.items[from]
	delete(src.items, from)
	src.lock.Unlock()
	if !ok {
		return false
	}
	dst := c.getShard(to)
	dst.lock.Lock()
	dst.items[to] = v
	dst.lock.Unlock()
	return true
}

// Stats walks every shard, locking one at a time.
func (c *Cache) Stats() (items, hits, misses int) {
	for _, s := range c.shards {
		s.lock.RLock()
		items += len(s.items)
		hits += s.hits
		misses += s.misses
		s.lock.RUnlock()
	}
	return
}
