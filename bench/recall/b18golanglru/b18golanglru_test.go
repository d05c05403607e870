// Project: hashicorp/golang-lru (lru.go / simplelru)
// Bug: NewWithEvict handed the user's eviction callback straight to the
//      underlying simplelru, so it ran inside Cache.Add while c.lock was held.
//      A callback that calls back into the cache (Len, Contains, Peek, ...)
//      blocks on c.lock.RLock held by its own goroutine.
// Fix: the Cache records the evicted key/value under the lock and invokes
//      onEvictedCB only after c.lock has been released.

package b18golanglru

import (
	"container/list"
	"sync"
	"testing"
)

// EvictCallback is used to get a callback when a cache entry is evicted.
type EvictCallback func(key interface{}, value interface{})

type entry struct {
	key   interface{}
	value interface{}
}

// LRU implements a non-thread safe fixed size LRU cache.
type LRU struct {
	size      int
	evictList *list.List
	items     map[interface{}]*list.Element
	onEvict   EvictCallback
}

func NewLRU(size int, onEvict EvictCallback) *LRU {
	return &LRU{size: size, evictList: list.New(), items: make(map[interface{}]*list.Element), onEvict: onEvict}
}

// Add adds a value to the cache. Returns true if an eviction occurred.
func (c *LRU) Add(key, value interface{}) (evicted bool) {
	if ent, ok := c.items[key]; ok {
		c.evictList.MoveToFront(ent)
		ent.Value.(*entry).value = value
		return false
	}
	ent := &entry{key, value}
	c.items[key] = c.evictList.PushFront(ent)
	evict := c.evictList.Len() > c.size
	if evict {
		c.removeOldest()
	}
	return evict
}

func (c *LRU) Get(key interface{}) (value interface{}, ok bool) {
	if ent, ok := c.items[key]; ok {
		c.evictList.MoveToFront(ent)
		return ent.Value.(*entry).value, true
	}
	return
}

func (c *LRU) Contains(key interface{}) bool { _, ok := c.items[key]; return ok }

func (c *LRU) Len() int { return c.evictList.Len() }

func (c *LRU) removeOldest() {
	if ent := c.evictList.Back(); ent != nil {
		c.removeElement(ent)
	}
}

func (c *LRU) removeElement(e *list.Element) {
	c.evictList.Remove(e)
	kv := e.Value.(*entry)
	delete(c.items, kv.key)
	if c.onEvict != nil {
		c.onEvict(kv.key, kv.value)
	}
}

// Cache is a thread-safe fixed size LRU cache.
type Cache struct {
	lru         *LRU
	evictedKeys []interface{}
	evictedVals []interface{}
	onEvictedCB EvictCallback
	lock        sync.RWMutex
}

// NewWithEvict constructs a fixed size cache with the given eviction callback.
func NewWithEvict(size int, onEvicted EvictCallback) *Cache {
	c := &Cache{onEvictedCB: onEvicted}
	c.lru = NewLRU(size, onEvicted)
	return c
}

// Add adds a value to the cache. Returns true if an eviction occurred.
func (c *Cache) Add(key, value interface{}) (evicted bool) {
	c.lock.Lock()
	evicted = c.lru.Add(key, value)
	c.lock.Unlock()
	return evicted
}

func (c *Cache) Get(key interface{}) (value interface{}, ok bool) {
	c.lock.Lock()
	value, ok = c.lru.Get(key)
	c.lock.Unlock()
	return value, ok
}

func (c *Cache) Contains(key interface{}) bool {
	c.lock.RLock()
	defer c.lock.RUnlock()
	return c.lru.Contains(key)
}

func (c *Cache) Len() int {
	c.lock.RLock()
	defer c.lock.RUnlock()
	return c.lru.Len()
}

// blockStore keeps hot blocks in memory and spills evicted ones to disk.
type blockStore struct {
	hot     *Cache
	mu      sync.Mutex
	spilled map[string][]byte
	gauge   []int
}

func newBlockStore(size int) *blockStore {
	bs := &blockStore{spilled: map[string][]byte{}}
	bs.hot = NewWithEvict(size, bs.onEvict)
	return bs
}

func (bs *blockStore) onEvict(key, value interface{}) {
	bs.mu.Lock()
	bs.spilled[key.(string)] = value.([]byte)
	bs.gauge = append(bs.gauge, bs.hot.Len())
	bs.mu.Unlock()
}

func TestEvictCallbackReadsCache(t *testing.T) {
	bs := newBlockStore(2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, k := range []string{"blk-1", "blk-2", "blk-3"} {
			bs.hot.Add(k, []byte(k))
		}
	}()
	<-done
	if !bs.hot.Contains("blk-3") {
		t.Fatal("missing blk-3")
	}
}
