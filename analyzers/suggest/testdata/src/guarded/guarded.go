// Package guarded: fields accessed with one lock held at nearly every
// site get a guardedby suggestion; the sites without it are deviants.
package guarded

import "sync"

type Cache struct {
	mu      sync.Mutex
	entries map[string]int // want `Cache.entries: add //confined:guardedby mu \(rank \d of \d\): mu is held at 6 of 7 accesses( \(and not at 1 in tests, not counted\))?; 1 deviant: c.entries read in Cache.Peek \(guarded.go:\d+\)`
	hits    int            // want `Cache.hits: add //confined:guardedby mu \(rank \d of \d\): mu is held at 2 of 2 accesses`
	// misses is locked at one site of three: no majority, no suggestion.
	misses int
	// name is written once, at construction, and read freely.
	name string
}

func NewCache(name string) *Cache {
	c := &Cache{name: name}
	c.entries = map[string]int{} // construction: not counted
	return c
}

// NewEmpty initialises through a method: construction too.
func NewEmpty() *Cache {
	c := &Cache{}
	c.setup()
	return c
}

func (c *Cache) setup() { c.entries = map[string]int{} }

func (c *Cache) Get(k string) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.entries[k]
	if ok {
		c.hits++
	} else {
		c.misses++
	}
	return v, ok
}

func (c *Cache) Put(k string, v int) {
	c.mu.Lock()
	c.putLocked(k, v)
	c.mu.Unlock()
}

// putLocked runs with mu held: every caller holds it.
func (c *Cache) putLocked(k string, v int) {
	c.entries[k] = v
}

func (c *Cache) Stats() (int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, len(c.entries)
}

func (c *Cache) Reset() {
	c.mu.Lock()
	c.entries = map[string]int{}
	c.mu.Unlock()
	c.misses = 0
}

// Flush holds mu through a chain of helpers and a closure: every access
// below it is locked.
func (c *Cache) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flushLocked()
}

func (c *Cache) flushLocked() { c.each(func(k string) { c.dropLocked(k) }) }

func (c *Cache) each(f func(string)) {
	for k := range c.entries {
		f(k)
	}
}

func (c *Cache) dropLocked(k string) { delete(c.entries, k) }

// Peek forgets the lock: the deviant site.
func (c *Cache) Peek(k string) int {
	return c.entries[k]
}

func (c *Cache) Misses() int { return c.misses }

func (c *Cache) Name() string { return c.name }

// Table uses an RWMutex: reads under RLock count.
type Table struct {
	mu   sync.RWMutex
	rows []string // want `Table.rows: add //confined:guardedby mu \(rank \d of \d\): mu is held at 2 of 2 accesses`
}

func (t *Table) Add(r string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rows = append(t.rows, r)
}

func (t *Table) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.rows)
}

var (
	registryMu sync.Mutex
	registry   = map[string]*Cache{} // want `registry: add //confined:guardedby registryMu \(rank \d of \d\): registryMu is held at 2 of 2 accesses`
)

func Register(c *Cache) {
	registryMu.Lock()
	registry[c.name] = c
	registryMu.Unlock()
}

func Lookup(name string) *Cache {
	registryMu.Lock()
	defer registryMu.Unlock()
	return registry[name]
}
