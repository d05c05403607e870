package heldresult

import "sync"

// A function that returns an object with its lock held hands the lock to
// its caller in the call's value: a store that lays down a locked intent
// for a transaction to commit later, a lookup that locks the entry it
// found (nil when there is none).

type intent struct {
	mu  sync.Mutex
	txn string
}

type Store struct {
	mu      sync.Mutex
	intents map[string]*intent
}

// put makes, locks and publishes an intent; its caller commits it later.
func (s *Store) put(key, txn string) *intent {
	in := &intent{txn: txn}
	in.mu.Lock()
	s.mu.Lock()
	s.intents[key] = in
	s.mu.Unlock()
	return in
}

// commit releases the key's intent, whoever laid it down.
func (s *Store) commit(key string) {
	s.mu.Lock()
	in := s.intents[key]
	delete(s.intents, key)
	s.mu.Unlock()
	in.mu.Unlock()
}

// wait blocks while a writer's intent sits on key.
func (s *Store) wait(key string) {
	s.mu.Lock()
	in := s.intents[key]
	s.mu.Unlock()
	if in != nil {
		in.mu.Lock()
		in.mu.Unlock()
	}
}

type Catalog struct {
	mu    sync.Mutex
	store *Store
	names map[string]int
}

// create keeps its intent while it consults the catalog: intent.mu then
// Catalog.mu.
func (c *Catalog) create(name string) {
	c.store.put(name, "create")
	c.mu.Lock()
	c.names[name]++
	c.mu.Unlock()
	c.store.commit(name)
}

// settle waits for the key's writer while it holds the catalog.
func (c *Catalog) settle(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.store.wait(name) // want `lock order inversion: intent.mu then Catalog.mu in Catalog.create \(result.go:59 -> result.go:60\) but Catalog.mu then intent.mu in Catalog.settle \(result.go:68 -> result.go:70 via Store.wait\) \[lock-order\]`
}

// createCommitted commits before it consults the catalog: silent.
func (c *Catalog) createCommitted(name string) {
	in := c.store.put(name, "create")
	in.mu.Unlock()
	c.mu.Lock()
	c.names[name]++
	c.mu.Unlock()
}

type entry struct {
	mu   sync.Mutex
	hits int
}

type Table struct {
	mu      sync.Mutex
	entries map[string]*entry
	stats   *Stats
}

type Stats struct {
	mu    sync.Mutex
	total int
}

// locked returns the key's entry locked, nil when there is none.
func (t *Table) locked(key string) *entry {
	t.mu.Lock()
	e := t.entries[key]
	t.mu.Unlock()
	if e == nil {
		return nil
	}
	e.mu.Lock()
	return e
}

// hit counts under the entry it looked up: entry.mu then Stats.mu.
func (t *Table) hit(key string) {
	e := t.locked(key)
	if e == nil {
		return
	}
	e.hits++
	t.stats.mu.Lock()
	t.stats.total++
	t.stats.mu.Unlock()
	e.mu.Unlock()
}

// hitAfter releases the entry before it counts: silent.
func (t *Table) hitAfter(key string) {
	e := t.locked(key)
	if e == nil {
		return
	}
	e.hits++
	e.mu.Unlock()
	t.stats.mu.Lock()
	t.stats.total++
	t.stats.mu.Unlock()
}

// reset clears every entry under Stats.mu.
func (s *Stats) reset(t *Table) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range t.entries {
		e.mu.Lock() // want `lock order inversion: entry.mu then Stats.mu in Table.hit \(result.go:112 -> result.go:117\) but Stats.mu then entry.mu in Stats.reset \(result.go:138 -> result.go:141\) \[lock-order\]`
		e.hits = 0
		e.mu.Unlock()
	}
	s.total = 0
}
