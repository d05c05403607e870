// Package eachturn: a cycle of three locks is reported only when each of
// its edges is certain; an edge taken on each turn of a loop (a cache
// updating every endpoint under its own lock) is, as a loop's re-lock is
// for the double lock: the loop locks the first object it meets. Three
// goroutines each holding one lock and waiting for the next deadlock
// (cilium's IPCache, endpoint and NameManager).
package eachturn

import "sync"

type Endpoint struct {
	mu      sync.Mutex
	pending int
	names   *NameManager
}

func (e *Endpoint) apply() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.pending = 0
}

func (e *Endpoint) Regenerate() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.names.register()
}

type Cache struct {
	mu        sync.Mutex
	endpoints []*Endpoint
	entries   map[string]int
}

func (c *Cache) updateAll() {
	for _, ep := range c.endpoints {
		ep.apply()
	}
}

func (c *Cache) Remove(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, key)
	c.updateAll()
}

func (c *Cache) upsert(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[key] = 1
}

type NameManager struct {
	mu    sync.Mutex
	names map[string]bool
	cache *Cache
}

func (n *NameManager) register() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.names["x"] = true
}

func (n *NameManager) UpdateDNS(keys []string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, k := range keys {
		n.cache.upsert(k) // want `lock order inversion: Cache.mu then Endpoint.mu in Cache.Remove .*, Endpoint.mu then NameManager.mu in Endpoint.Regenerate .* but NameManager.mu then Cache.mu in NameManager.UpdateDNS`
	}
}

// The same three locks with one edge on a branch of its callee: a path
// the program may never run, as before.
type Endpoint2 struct {
	mu    sync.Mutex
	stale bool
	names *NameManager2
}

func (e *Endpoint2) apply() {
	e.mu.Lock()
	defer e.mu.Unlock()
}

func (e *Endpoint2) Regenerate() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.names.register()
}

type Cache2 struct {
	mu        sync.Mutex
	endpoints []*Endpoint2
}

func (c *Cache2) updateStale() {
	for _, ep := range c.endpoints {
		if ep.stale {
			ep.apply()
		}
	}
}

func (c *Cache2) Remove() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updateStale()
}

func (c *Cache2) upsert() {
	c.mu.Lock()
	defer c.mu.Unlock()
}

type NameManager2 struct {
	mu    sync.Mutex
	cache *Cache2
}

func (n *NameManager2) register() {
	n.mu.Lock()
	defer n.mu.Unlock()
}

func (n *NameManager2) UpdateDNS(keys []string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for range keys {
		n.cache.upsert()
	}
}
