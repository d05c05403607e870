// Project: hashicorp/golang-lru (v2, expirable/expirable_lru.go), from the addition of the expirable package (v2.0.3, approximate) to v2.0.7, fixed in 2026.
// Bug: expirable.LRU invokes the user's onEvict callback from removeElement while c.mu is still held, and the TTL reaper goroutine reaches removeElement through deleteExpired; an eviction callback that touches the cache (here it reports the cache size with Len) blocks on c.mu forever, and every later Get or Add on the cache blocks behind it (issue #230, fixed by PR #233 "invoke expirable onEvict callbacks outside the cache lock", which snapshots the evicted entries under the lock and calls onEvict after unlocking).
package b115lruexpirableevict

import (
	"sync"
	"testing"
	"time"
)

// Entry and LruList mirror golang-lru/v2/internal/list.go.
type Entry[K comparable, V any] struct {
	next, prev   *Entry[K, V]
	list         *LruList[K, V]
	Key          K
	Value        V
	ExpiresAt    time.Time
	ExpireBucket uint8
}

type LruList[K comparable, V any] struct {
	root Entry[K, V]
	len  int
}

func NewList[K comparable, V any]() *LruList[K, V] {
	l := &LruList[K, V]{}
	l.root.next, l.root.prev = &l.root, &l.root
	return l
}

func (l *LruList[K, V]) Length() int { return l.len }

func (l *LruList[K, V]) Back() *Entry[K, V] {
	if l.len == 0 {
		return nil
	}
	return l.root.prev
}

func (l *LruList[K, V]) insert(e, at *Entry[K, V]) *Entry[K, V] {
	e.prev, e.next = at, at.next
	e.prev.next, e.next.prev = e, e
	e.list = l
	l.len++
	return e
}

func (l *LruList[K, V]) PushFrontExpirable(k K, v V, expiresAt time.Time) *Entry[K, V] {
	return l.insert(&Entry[K, V]{Key: k, Value: v, ExpiresAt: expiresAt}, &l.root)
}

func (l *LruList[K, V]) Remove(e *Entry[K, V]) V {
	e.prev.next, e.next.prev = e.next, e.prev
	e.next, e.prev, e.list = nil, nil, nil
	l.len--
	return e.Value
}

func (l *LruList[K, V]) MoveToFront(e *Entry[K, V]) {
	l.Remove(e)
	l.insert(e, &l.root)
}

// EvictCallback is used to get a callback when a cache entry is evicted
type EvictCallback[K comparable, V any] func(key K, value V)

// LRU implements a thread-safe LRU with expirable entries.
type LRU[K comparable, V any] struct {
	size      int
	evictList *LruList[K, V]
	items     map[K]*Entry[K, V]
	onEvict   EvictCallback[K, V]

	mu   sync.Mutex
	ttl  time.Duration
	done chan struct{}

	buckets           []bucket[K, V]
	nextCleanupBucket uint8
}

type bucket[K comparable, V any] struct {
	entries     map[K]*Entry[K, V]
	newestEntry time.Time
}

const numBuckets = 100

func NewLRU[K comparable, V any](size int, onEvict EvictCallback[K, V], ttl time.Duration) *LRU[K, V] {
	res := LRU[K, V]{ttl: ttl, size: size, evictList: NewList[K, V](), items: make(map[K]*Entry[K, V]),
		onEvict: onEvict, done: make(chan struct{}), buckets: make([]bucket[K, V], numBuckets)}
	for i := 0; i < numBuckets; i++ {
		res.buckets[i] = bucket[K, V]{entries: make(map[K]*Entry[K, V])}
	}
	go func(done <-chan struct{}) {
		ticker := time.NewTicker(res.ttl / numBuckets)
		defer ticker.Stop()
		for {
			select {
			case <-done:
				return
			case <-ticker.C:
				res.deleteExpired()
			}
		}
	}(res.done)
	return &res
}

// Add adds a value to the cache. Returns true if an eviction occurred.
func (c *LRU[K, V]) Add(key K, value V) (evicted bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if ent, ok := c.items[key]; ok {
		c.evictList.MoveToFront(ent)
		c.removeFromBucket(ent)
		ent.Value, ent.ExpiresAt = value, now.Add(c.ttl)
		c.addToBucket(ent)
		return false
	}
	ent := c.evictList.PushFrontExpirable(key, value, now.Add(c.ttl))
	c.items[key] = ent
	c.addToBucket(ent)
	evict := c.size > 0 && c.evictList.Length() > c.size
	if evict {
		c.removeOldest()
	}
	return evict
}

// Get looks up a key's value from the cache.
func (c *LRU[K, V]) Get(key K) (value V, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ent *Entry[K, V]
	if ent, ok = c.items[key]; ok {
		if time.Now().After(ent.ExpiresAt) {
			return value, false
		}
		c.evictList.MoveToFront(ent)
		return ent.Value, true
	}
	return
}

// Len returns the number of items in the cache.
func (c *LRU[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.evictList.Length()
}

// Close destroys cleanup goroutine.
func (c *LRU[K, V]) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.done:
		return
	default:
	}
	close(c.done)
}

// removeOldest removes the oldest item from the cache. Has to be called with lock!
func (c *LRU[K, V]) removeOldest() {
	if ent := c.evictList.Back(); ent != nil {
		c.removeElement(ent)
	}
}

// removeElement is used to remove a given list element from the cache. Has to be called with lock!
func (c *LRU[K, V]) removeElement(e *Entry[K, V]) {
	c.evictList.Remove(e)
	delete(c.items, e.Key)
	c.removeFromBucket(e)
	if c.onEvict != nil {
		c.onEvict(e.Key, e.Value)
	}
}

// deleteExpired deletes expired records from the oldest bucket, waiting for the newest entry
// in it to expire first.
func (c *LRU[K, V]) deleteExpired() {
	c.mu.Lock()
	bucketIdx := c.nextCleanupBucket
	timeToExpire := time.Until(c.buckets[bucketIdx].newestEntry)
	// wait for newest entry to expire before cleanup without holding lock
	if timeToExpire > 0 {
		c.mu.Unlock()
		time.Sleep(timeToExpire)
		c.mu.Lock()
	}
	for _, ent := range c.buckets[bucketIdx].entries {
		c.removeElement(ent)
	}
	c.nextCleanupBucket = (c.nextCleanupBucket + 1) % numBuckets
	c.mu.Unlock()
}

// addToBucket adds entry to expire bucket so that it will be cleaned up when the time comes. Has to be called with lock!
func (c *LRU[K, V]) addToBucket(e *Entry[K, V]) {
	bucketID := (numBuckets + c.nextCleanupBucket - 1) % numBuckets
	e.ExpireBucket = bucketID
	c.buckets[bucketID].entries[e.Key] = e
	if c.buckets[bucketID].newestEntry.Before(e.ExpiresAt) {
		c.buckets[bucketID].newestEntry = e.ExpiresAt
	}
}

// removeFromBucket removes the entry from its corresponding bucket. Has to be called with lock!
func (c *LRU[K, V]) removeFromBucket(e *Entry[K, V]) {
	delete(c.buckets[e.ExpireBucket].entries, e.Key)
}

func TestB115lruexpirableevict(t *testing.T) {
	// A session cache whose eviction hook publishes the cache size as a gauge.
	evicted := make(chan string, 4)
	var sessions *LRU[string, int]
	sessions = NewLRU[string, int](64, func(key string, _ int) {
		evicted <- key
		_ = sessions.Len() // sessionsGauge.Set(float64(sessions.Len()))
	}, 100*time.Millisecond)
	defer sessions.Close()

	sessions.Add("session-1", 1)
	if k := <-evicted; k != "session-1" { // the TTL reaper is inside onEvict now
		t.Fatalf("evicted %q", k)
	}
	if _, ok := sessions.Get("session-2"); ok {
		t.Fatal("unexpected hit")
	}
	sessions.Add("session-2", 2)
}
