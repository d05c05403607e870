// Package features_generics: guarded fields in generic types and locks
// taken in methods of type-parameterised types.
package features_generics

import "sync"

type Cache[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V //confined:guardedby mu
}

func (c *Cache[K, V]) Get(k K) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k] // silent
}

// put requires mu: its callers hold it.
//
//confined:requires mu
func (c *Cache[K, V]) put(k K, v V) {
	c.m[k] = v // silent: required
}

func (c *Cache[K, V]) PutUnlocked(k K, v V) {
	c.put(k, v) // want `call to Cache.put requires Cache.mu held exclusively, but it is not held here \[requires\]`
}

func (c *Cache[K, V]) GetOrPut(k K, v V) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[k]; ok {
		return old
	}
	c.put(k, v) // silent: held
	return v
}

func (c *Cache[K, V]) Size() int {
	c.mu.Lock()
	n := c.len() // want `Cache.mu locked again by Cache.len \(at generics.go:\d+\) while held since generics.go:\d+: self-deadlock \[double-lock\]`
	c.mu.Unlock()
	return n
}

func (c *Cache[K, V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// A lock reached through a type parameter constrained by sync.Locker.
func twice[L sync.Locker](l L) {
	l.Lock()
	defer l.Unlock()
}

func use() {
	c := &Cache[string, int]{m: map[string]int{}}
	_ = c.Get("a")
	_ = c.GetOrPut("b", 1)
	_ = c.Size()
	twice(&sync.Mutex{})
}
