// Project: cockroachdb/cockroach (kv/range_cache.go, used by kv/dist_sender.go), spring 2016.
// Bug: LookupRangeDescriptor holds rangeCacheMu.RLock and on a miss with log.V(3) formats rdc with %s, so
// rdc.String() read-locks rangeCacheMu again, and an EvictCachedRangeDescriptor writer queued in between deadlocks
// with both (cockroach #6181, approximate; fixed by logging rdc.stringLocked()).
package main

import (
	"bytes"
	"fmt"
	"sort"
	"sync"
	"time"
)

type RKey []byte // roachpb.RKey
type rangeCacheKey RKey

func (rk RKey) Next() RKey { return append(append(RKey(nil), rk...), 0) }

type RangeDescriptor struct {
	RangeID          int64
	StartKey, EndKey RKey
}

func (r RangeDescriptor) ContainsKey(k RKey) bool {
	return bytes.Compare(k, r.StartKey) >= 0 && bytes.Compare(k, r.EndKey) < 0
}

// OrderedCache stands in for util/cache.OrderedCache (an llrb tree).
type OrderedCache struct{ m map[string]interface{} }

func (oc *OrderedCache) Add(key rangeCacheKey, value interface{}) { oc.m[string(key)] = value }
func (oc *OrderedCache) Del(key rangeCacheKey)                    { delete(oc.m, string(key)) }

func (oc *OrderedCache) sortedKeys() (keys []string) {
	for k := range oc.m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (oc *OrderedCache) Ceil(key rangeCacheKey) (rangeCacheKey, interface{}, bool) {
	keys := oc.sortedKeys()
	if i := sort.SearchStrings(keys, string(key)); i < len(keys) {
		return rangeCacheKey(keys[i]), oc.m[keys[i]], true
	}
	return nil, nil, false
}

func (oc *OrderedCache) Do(f func(k, v interface{})) {
	for _, k := range oc.sortedKeys() {
		f(rangeCacheKey(k), oc.m[k])
	}
}

func V(level int) bool                         { return level <= 3 } // util/log, --verbosity=3
func Infof(format string, args ...interface{}) { _ = fmt.Sprintf(format, args...) }

// rangeDescriptorDB is a type which can query range descriptors from an underlying datastore.
type rangeDescriptorDB interface {
	RangeLookup(key RKey, considerIntents, useReverseScan bool) ([]RangeDescriptor, error)
}

type evictionToken struct {
	prevDesc *RangeDescriptor
	evict    func() error
}

func (et *evictionToken) Evict() error { return et.evict() }

// rangeDescriptorCache is used to retrieve range descriptors for arbitrary keys. Descriptors are
// initially queried from storage using a rangeDescriptorDB, but is cached for subsequent lookups.
type rangeDescriptorCache struct {
	db rangeDescriptorDB
	// rangeCache caches replica metadata for key ranges.
	rangeCache *OrderedCache
	// rangeCacheMu protects rangeCache for concurrent access
	rangeCacheMu sync.RWMutex

	testingOnCacheMiss func() // harness hook standing in for scheduling delay
}

func newRangeDescriptorCache(db rangeDescriptorDB) *rangeDescriptorCache {
	return &rangeDescriptorCache{db: db, rangeCache: &OrderedCache{m: map[string]interface{}{}}}
}

func (rdc *rangeDescriptorCache) String() string {
	rdc.rangeCacheMu.RLock()
	defer rdc.rangeCacheMu.RUnlock()
	return rdc.stringLocked()
}

func (rdc *rangeDescriptorCache) stringLocked() string {
	var buf bytes.Buffer
	rdc.rangeCache.Do(func(k, v interface{}) {
		fmt.Fprintf(&buf, "key=%q desc=%+v\n", k, v)
	})
	return buf.String()
}

func (rdc *rangeDescriptorCache) makeEvictionToken(prevDesc *RangeDescriptor, evict func() error) *evictionToken {
	return &evictionToken{prevDesc: prevDesc, evict: evict}
}

// LookupRangeDescriptor attempts to locate a descriptor for the range
// containing the given Key, first from the cache and then from the database.
func (rdc *rangeDescriptorCache) LookupRangeDescriptor(key RKey, considerIntents, useReverseScan bool) (*RangeDescriptor, *evictionToken, error) {
	rdc.rangeCacheMu.RLock()
	if _, desc := rdc.getCachedRangeDescriptorLocked(key); desc != nil {
		rdc.rangeCacheMu.RUnlock()
		return desc, rdc.makeEvictionToken(desc, func() error {
			return rdc.EvictCachedRangeDescriptor(key, desc)
		}), nil
	}
	if rdc.testingOnCacheMiss != nil {
		rdc.testingOnCacheMiss()
	}
	if V(3) {
		Infof("lookup range descriptor: key=%q\n%s", key, rdc.stringLocked())
	}
	rdc.rangeCacheMu.RUnlock()

	rs, err := rdc.db.RangeLookup(key, considerIntents, useReverseScan)
	if err != nil {
		return nil, nil, err
	}
	rdc.rangeCacheMu.Lock()
	rdc.insertRangeDescriptorsLocked(rs...)
	rdc.rangeCacheMu.Unlock()
	desc := &rs[0]
	return desc, rdc.makeEvictionToken(desc, func() error {
		return rdc.EvictCachedRangeDescriptor(key, desc)
	}), nil
}

// EvictCachedRangeDescriptor will evict any cached range descriptors for the given key.
func (rdc *rangeDescriptorCache) EvictCachedRangeDescriptor(descKey RKey, seenDesc *RangeDescriptor) error {
	rdc.rangeCacheMu.Lock()
	defer rdc.rangeCacheMu.Unlock()
	return rdc.evictCachedRangeDescriptorLocked(descKey, seenDesc)
}

func (rdc *rangeDescriptorCache) evictCachedRangeDescriptorLocked(descKey RKey, seenDesc *RangeDescriptor) error {
	rngKey, cachedDesc := rdc.getCachedRangeDescriptorLocked(descKey)
	if cachedDesc == nil || (seenDesc != nil && seenDesc.RangeID != cachedDesc.RangeID) {
		return nil
	}
	rdc.rangeCache.Del(rngKey)
	return nil
}

// getCachedRangeDescriptorLocked retrieves the descriptor of the range containing key.
func (rdc *rangeDescriptorCache) getCachedRangeDescriptorLocked(key RKey) (rangeCacheKey, *RangeDescriptor) {
	k, v, ok := rdc.rangeCache.Ceil(rangeCacheKey(key.Next()))
	if !ok || !v.(*RangeDescriptor).ContainsKey(key) {
		return nil, nil
	}
	return k, v.(*RangeDescriptor)
}

func (rdc *rangeDescriptorCache) insertRangeDescriptorsLocked(rs ...RangeDescriptor) {
	for i := range rs {
		rdc.rangeCache.Add(rangeCacheKey(rs[i].EndKey), &rs[i])
	}
}

type metaDB struct{ descs []RangeDescriptor } // the meta ranges

func (m *metaDB) RangeLookup(key RKey, _, _ bool) (rs []RangeDescriptor, err error) {
	for _, d := range m.descs {
		if d.ContainsKey(key) {
			rs = append(rs, d)
		}
	}
	return rs, nil
}

func main() {
	rdc := newRangeDescriptorCache(&metaDB{descs: []RangeDescriptor{
		{RangeID: 1, StartKey: RKey("a"), EndKey: RKey("m")}, {RangeID: 2, StartKey: RKey("m"), EndKey: RKey("z")},
	}})

	// Warm the cache with r1; then A misses on r2 while B evicts a stale r1 (RangeKeyMismatchError).
	_, tok, _ := rdc.LookupRangeDescriptor(RKey("c"), false, false)
	missed := make(chan struct{})
	rdc.testingOnCacheMiss = func() {
		close(missed)
		time.Sleep(50 * time.Millisecond)
	}
	go func() {
		<-missed
		_ = tok.Evict()
	}()
	desc, _, err := rdc.LookupRangeDescriptor(RKey("q"), false, false)
	fmt.Println("found", desc.RangeID, err)
}
