// Project: dgraph-io/ristretto (ttl.go, store.go, cache.go), v0.0.3 era TTL support, 2020 (approximate).
// Bug: expirationMap.cleanup, run from Cache.processItems on the cleanup ticker, kept the expiration map lock (m.Lock with a defer) while it deleted every expired key from the store; shardedMap.Del goes through lockedMap.Del, which calls m.em.del on the same expirationMap to drop the key from its bucket, and that takes m.Lock again, so the cleanup goroutine self-deadlocks and the cache stops processing items.
package main

import (
	"fmt"
	"sync"
	"time"
)

var timeNow = time.Now

const bucketDurationSecs = int64(5)

func storageBucket(t time.Time) int64 { return (t.Unix() / bucketDurationSecs) + 1 }
func cleanupBucket(t time.Time) int64 { return storageBucket(t) - 1 }

type bucket map[uint64]uint64 // key -> conflict

type expirationMap struct {
	sync.RWMutex
	buckets map[int64]bucket
}

func (m *expirationMap) add(key, conflict uint64, expiration time.Time) {
	if expiration.IsZero() {
		return
	}
	bucketNum := storageBucket(expiration)
	m.Lock()
	defer m.Unlock()
	b, ok := m.buckets[bucketNum]
	if !ok {
		b = make(bucket)
		m.buckets[bucketNum] = b
	}
	b[key] = conflict
}

func (m *expirationMap) del(key uint64, expiration time.Time) {
	bucketNum := storageBucket(expiration)
	m.Lock()
	defer m.Unlock()
	delete(m.buckets[bucketNum], key) // no-op if the bucket is gone
}

type onEvictFunc func(uint64, uint64, interface{}, int64)

// cleanup removes all the items in the bucket that was just completed.
func (m *expirationMap) cleanup(store store, policy policy, onEvict onEvictFunc) {
	m.Lock()
	defer m.Unlock()
	now := timeNow()
	bucketNum := cleanupBucket(now)
	keys := m.buckets[bucketNum]
	delete(m.buckets, bucketNum)

	for key, conflict := range keys {
		// Sanity check. Verify that the store agrees that this key is expired.
		if store.Expiration(key).After(now) {
			continue
		}
		cost := policy.Cost(key)
		policy.Del(key)
		_, value := store.Del(key, conflict)
		if onEvict != nil {
			onEvict(key, conflict, value, cost)
		}
	}
}

type store interface {
	Expiration(uint64) time.Time
	Set(key, conflict uint64, value interface{}, expiration time.Time)
	Del(uint64, uint64) (uint64, interface{})
	Cleanup(policy, onEvictFunc)
}

type storeItem struct {
	key, conflict uint64
	value         interface{}
	expiration    time.Time
}

type lockedMap struct { // one shard of the store
	sync.RWMutex
	data map[uint64]storeItem
	em   *expirationMap
}

func (m *lockedMap) Expiration(key uint64) time.Time {
	m.RLock()
	defer m.RUnlock()
	return m.data[key].expiration
}

func (m *lockedMap) Set(key, conflict uint64, value interface{}, expiration time.Time) {
	m.Lock()
	defer m.Unlock()
	m.em.add(key, conflict, expiration)
	m.data[key] = storeItem{key: key, conflict: conflict, value: value, expiration: expiration}
}

func (m *lockedMap) Del(key, conflict uint64) (uint64, interface{}) {
	m.Lock()
	item, ok := m.data[key]
	if !ok || (conflict != 0 && conflict != item.conflict) {
		m.Unlock()
		return 0, nil
	}
	if !item.expiration.IsZero() {
		m.em.del(key, item.expiration)
	}
	delete(m.data, key)
	m.Unlock()
	return item.conflict, item.value
}

const numShards uint64 = 4

type shardedMap struct {
	shards    []*lockedMap
	expiryMap *expirationMap
}

func newShardedMap() *shardedMap {
	sm := &shardedMap{expiryMap: &expirationMap{buckets: make(map[int64]bucket)}}
	for i := uint64(0); i < numShards; i++ {
		sm.shards = append(sm.shards, &lockedMap{data: make(map[uint64]storeItem), em: sm.expiryMap})
	}
	return sm
}

func (sm *shardedMap) Expiration(key uint64) time.Time {
	return sm.shards[key%numShards].Expiration(key)
}
func (sm *shardedMap) Del(key, conflict uint64) (uint64, interface{}) {
	return sm.shards[key%numShards].Del(key, conflict)
}
func (sm *shardedMap) Cleanup(policy policy, onEvict onEvictFunc) {
	sm.expiryMap.cleanup(sm, policy, onEvict)
}
func (sm *shardedMap) Set(key, conflict uint64, value interface{}, exp time.Time) {
	sm.shards[key%numShards].Set(key, conflict, value, exp)
}

type policy interface {
	Add(key uint64, cost int64)
	Cost(key uint64) int64
	Del(key uint64)
}

type defaultPolicy struct {
	sync.Mutex
	costs map[uint64]int64
}

func (p *defaultPolicy) Add(key uint64, cost int64) { p.Lock(); p.costs[key] = cost; p.Unlock() }
func (p *defaultPolicy) Cost(key uint64) int64      { p.Lock(); defer p.Unlock(); return p.costs[key] }
func (p *defaultPolicy) Del(key uint64)             { p.Lock(); delete(p.costs, key); p.Unlock() }

type Cache struct {
	store         store
	policy        policy
	onEvict       onEvictFunc
	cleanupTicker chan time.Time
	done          chan struct{}
}

func (c *Cache) SetWithTTL(key uint64, value interface{}, cost int64, ttl time.Duration) {
	c.policy.Add(key, cost)
	c.store.Set(key, 0, value, timeNow().Add(ttl))
}

// processItems is ran by goroutines processing the Set buffer.
func (c *Cache) processItems() {
	defer close(c.done)
	for range c.cleanupTicker {
		c.store.Cleanup(c.policy, c.onEvict)
	}
}

func (c *Cache) Close() { close(c.cleanupTicker); <-c.done }

func main() {
	c := &Cache{store: newShardedMap(), policy: &defaultPolicy{costs: map[uint64]int64{}},
		cleanupTicker: make(chan time.Time), done: make(chan struct{})}
	c.onEvict = func(key, conflict uint64, value interface{}, cost int64) { fmt.Println("evicted", key, value) }
	go c.processItems()
	base := timeNow()
	timeNow = func() time.Time { return base }
	for k := uint64(1); k <= 3; k++ {
		c.SetWithTTL(k, fmt.Sprintf("v%d", k), 1, time.Second)
	}
	// Six seconds later the bucket holding these keys is complete.
	timeNow = func() time.Time { return base.Add(6 * time.Second) }
	c.cleanupTicker <- timeNow()
	c.Close()
	fmt.Println("closed")
}
