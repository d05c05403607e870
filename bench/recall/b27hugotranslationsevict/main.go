// Project: gohugoio/hugo (hugolib/page.go, cache/dynacache, github.com/bep/lazycache)
// Issue: gohugoio/hugo#12129 "hugo stalls when hitting hard memory limit", fixed
// by commit 758a876 "Fix potential deadlock in Translations" (v0.124.1).
// Bug: pageState.Translations caches its result in partition cachePages1 via
// lazycache.GetOrCreate, which inserts a not-yet-ready valueWrapper and runs the
// create func unlocked. That func calls AllTranslations, a GetOrCreate on the SAME
// partition. With the partitions shrunk under memory pressure (adjustCurrentMaxSize
// -> adjustMaxSize -> lazycache.Resize) the nested lru.Add evicts the pending
// "translations" entry, and the LRU's onEvict callback waits for it
// (valueWrapper.wait) with the lazycache mutex held -- a value only this goroutine
// can produce. Fix: AllTranslations uses a second partition, cachePages2.
// Deadlocking wait: <-w.ready in valueWrapper.wait (line 55), reached through the
// LRU onEvict callback with lazycache Cache.mu held (taken at line 75).
package main

import (
	"fmt"
	"sync"
)

type LRU[K comparable, V any] struct { // github.com/hashicorp/golang-lru/v2/simplelru
	size    int
	keys    []K // oldest first
	items   map[K]V
	onEvict func(key K, value V)
}

func (c *LRU[K, V]) Get(key K) (V, bool) { v, ok := c.items[key]; return v, ok }
func (c *LRU[K, V]) Add(key K, value V) {
	if _, ok := c.items[key]; !ok {
		c.keys = append(c.keys, key)
	}
	c.items[key] = value
	c.Resize(c.size)
}

func (c *LRU[K, V]) Resize(size int) {
	for c.size = size; len(c.keys) > c.size; {
		oldest := c.keys[0]
		c.keys = c.keys[1:]
		v := c.items[oldest]
		delete(c.items, oldest)
		c.onEvict(oldest, v) // evict callback runs with the caller's locks held
	}
}

type valueWrapper[V any] struct {
	value V
	found bool
	ready chan struct{}
}

func (w *valueWrapper[V]) wait() *valueWrapper[V] {
	if w.ready != nil {
		<-w.ready
	}
	return w
}

type Cache[K comparable, V any] struct { // github.com/bep/lazycache
	lru *LRU[K, *valueWrapper[V]]
	mu  sync.RWMutex
}

func NewLazyCache[K comparable, V any](maxEntries int, onEvict func(K, V)) *Cache[K, V] {
	evict := func(key K, value *valueWrapper[V]) {
		if value.wait().found {
			onEvict(key, value.value)
		}
	}
	return &Cache[K, V]{lru: &LRU[K, *valueWrapper[V]]{size: maxEntries, items: map[K]*valueWrapper[V]{}, onEvict: evict}}
}

func (c *Cache[K, V]) GetOrCreate(key K, create func(key K) (V, error)) (V, bool, error) {
	c.mu.Lock()
	if w, ok := c.lru.Get(key); ok {
		c.mu.Unlock()
		w.wait()
		return w.value, true, nil
	}
	w := &valueWrapper[V]{ready: make(chan struct{})}
	c.lru.Add(key, w) // may evict another entry and wait for it
	c.mu.Unlock()
	v, err := create(key) // create the value with the lock released
	w.value, w.found = v, err == nil
	close(w.ready)
	return v, false, err
}

func (c *Cache[K, V]) Resize(size int) { c.mu.Lock(); c.lru.Resize(size); c.mu.Unlock() }

const minMaxSize = 1 // hugo uses 10 with thousands of pages in flight; scaled down.

type Partition[K comparable, V any] struct{ c *Cache[K, V] }

func (p *Partition[K, V]) GetOrCreate(key K, create func(key K) (V, error)) (V, error) {
	v, _, err := p.c.GetOrCreate(key, create)
	return v, err
}
func (p *Partition[K, V]) adjustMaxSize(newMaxSize int) { p.c.Resize(newMaxSize) }

type DynaCache struct {
	partitions []interface{ adjustMaxSize(int) }
	onEvict    func(k, v any) // identity.WalkIdentitiesShallow + resource.MarkStale
}

func GetOrCreatePartition[K comparable, V any](c *DynaCache, maxSize int) *Partition[K, V] {
	p := &Partition[K, V]{c: NewLazyCache(maxSize, func(k K, v V) { c.onEvict(k, v) })}
	c.partitions = append(c.partitions, p)
	return p
}

func (c *DynaCache) adjustCurrentMaxSize() { // dynacache ticker, memory is low
	for _, p := range c.partitions {
		p.adjustMaxSize(minMaxSize)
	}
}

type Pages []*pageState
type pageMap struct{ cachePages1, cachePages2 *Partition[string, Pages] }

func (m *pageMap) getOrCreatePagesFromCache(cache *Partition[string, Pages], key string, create func(string) (Pages, error)) (Pages, error) {
	return cache.GetOrCreate(key, create)
}

type pageState struct {
	path string
	m    *pageMap
	tree Pages // this page in all language dimensions of the content tree
}

func (p *pageState) AllTranslations() Pages {
	key := p.path + "/" + "translations-all"
	pages, _ := p.m.getOrCreatePagesFromCache(p.m.cachePages1, key, func(string) (Pages, error) { return p.tree, nil })
	return pages
}

func (p *pageState) Translations() Pages {
	key := p.path + "/" + "translations"
	pages, _ := p.m.getOrCreatePagesFromCache(p.m.cachePages1, key, func(string) (Pages, error) {
		var pas Pages
		for _, pp := range p.AllTranslations() {
			if pp != p {
				pas = append(pas, pp)
			}
		}
		return pas, nil
	})
	return pages
}

func main() {
	dc := &DynaCache{onEvict: func(k, v any) {}}
	m := &pageMap{GetOrCreatePartition[string, Pages](dc, 100), GetOrCreatePartition[string, Pages](dc, 100)}
	en, nn := &pageState{path: "/posts/p1", m: m}, &pageState{path: "/posts/p1", m: m}
	en.tree, nn.tree = Pages{en, nn}, Pages{en, nn}
	dc.adjustCurrentMaxSize() // HUGO_MEMORYLIMIT reached: partitions shrink
	fmt.Println("translations of en:", len(en.Translations()))
}
