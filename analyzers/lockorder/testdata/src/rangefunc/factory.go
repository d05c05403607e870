package rangefunc

import (
	"iter"
	"sync"
)

// An iterator made by a method (`func (c *Cache) All() iter.Seq2`) that
// read-locks the cache while it yields: ranging over it, or calling it,
// runs that closure with the receiver it captured, so under the cache's
// own read lock it is a recursive read lock (geche's KVCache.Snapshot).
type Cache struct {
	mu   sync.RWMutex
	vals map[string]int
}

func (c *Cache) All() iter.Seq2[string, int] {
	return func(yield func(string, int) bool) {
		c.mu.RLock()
		defer c.mu.RUnlock()
		for k, v := range c.vals {
			if !yield(k, v) {
				return
			}
		}
	}
}

func (c *Cache) Snapshot() map[string]int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := map[string]int{}
	seq := c.All()
	seq(func(k string, v int) bool { // want `RLock of Cache.mu by Cache.All.func1 \(at factory.go:\d+\) while already read-locked since factory.go:\d+`
		out[k] = v
		return true
	})
	return out
}

// The fix: the snapshot ranges over the iterator without holding the
// lock the iterator takes.
func (c *Cache) SnapshotFixed() map[string]int {
	out := map[string]int{}
	for k, v := range c.All() {
		out[k] = v
	}
	return out
}

func (c *Cache) Set(k string, v int) {
	c.mu.Lock()
	c.vals[k] = v
	c.mu.Unlock()
}
