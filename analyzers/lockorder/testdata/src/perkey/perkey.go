// Package perkey: locks kept per key in a map or slice field are one lock
// class per container field ("KeyLocks.m[]"), and helpers that lock or
// unlock one key's lock hand it to their callers by class: two keys are
// two locks (no double lock), but the order against other locks counts.
package perkey

import "sync"

// KeyLocks hands out one mutex per key, made on first use.
type KeyLocks struct {
	mu sync.Mutex
	m  map[string]*sync.Mutex
}

func (l *KeyLocks) LockKey(k string) {
	l.mu.Lock()
	m, ok := l.m[k]
	if !ok {
		m = &sync.Mutex{}
		l.m[k] = m
	}
	l.mu.Unlock()
	m.Lock()
}

func (l *KeyLocks) UnlockKey(k string) {
	l.mu.Lock()
	m := l.m[k]
	l.mu.Unlock()
	m.Unlock()
}

// Store serialises writers of one key, and guards data with mu.
type Store struct {
	keys *KeyLocks
	mu   sync.RWMutex
	data map[string]int
}

// put holds the key's lock, then takes Store.mu.
func (s *Store) put(k string, v int) {
	s.keys.LockKey(k)
	defer s.keys.UnlockKey(k)
	s.mu.Lock()
	s.data[k] = v
	s.mu.Unlock()
}

// flush takes every key's lock under the read lock: put, holding a key,
// waits for Store.mu while flush, reading, waits for that key.
func (s *Store) flush() {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for k := range s.data {
		s.keys.LockKey(k) // want `lock order inversion: KeyLocks.m\[\] then Store.mu in Store.put \(perkey.go:\d+ -> perkey.go:\d+\) but Store.mu then KeyLocks.m\[\] in Store.flush \(perkey.go:\d+ -> perkey.go:\d+ via KeyLocks.LockKey\) \[lock-order\]`
		s.keys.UnlockKey(k)
	}
}

// Cache is Store done right: keys are copied under the read lock and
// locked after it is released.
type Cache struct {
	keys *KeyLocks
	mu   sync.RWMutex
	data map[string]int
}

func (c *Cache) put(k string, v int) {
	c.keys.LockKey(k)
	defer c.keys.UnlockKey(k)
	c.mu.Lock()
	c.data[k] = v
	c.mu.Unlock()
}

func (c *Cache) flush() {
	c.mu.RLock()
	keys := make([]string, 0, len(c.data))
	for k := range c.data {
		keys = append(keys, k)
	}
	c.mu.RUnlock()
	for _, k := range keys {
		c.keys.LockKey(k)
		c.keys.UnlockKey(k)
	}
}

// move holds two keys at once: two locks of one class, not a double lock.
// Silent.
func (c *Cache) move(from, to string) {
	c.keys.LockKey(from)
	c.keys.LockKey(to)
	c.mu.Lock()
	c.data[to] = c.data[from]
	c.mu.Unlock()
	c.keys.UnlockKey(to)
	c.keys.UnlockKey(from)
}

// bump leaves the key's lock held on its early return: UnlockKey releases
// it on the other path, so the helper's lock is one lock of the caller's.
func (c *Cache) bump(k string) bool {
	c.keys.LockKey(k)
	if k == "" {
		return false // want `KeyLocks.m\[\] taken at perkey.go:\d+ is still held on this return path \(other paths release it\) \[lock-leak\]`
	}
	c.keys.UnlockKey(k)
	return true
}

// Locks looks the key's mutex up under mu and locks it after releasing
// mu; the key's lock is named by the caller's path (l.m[k]).
type Locks struct {
	mu sync.Mutex
	m  map[string]*sync.Mutex
}

func (l *Locks) LockKey(k string)   { l.mu.Lock(); m := l.m[k]; l.mu.Unlock(); m.Lock() }
func (l *Locks) UnlockKey(k string) { l.mu.Lock(); m := l.m[k]; l.mu.Unlock(); m.Unlock() }

type Jobs struct {
	sync.RWMutex
	locks *Locks
	state map[string]int
}

// run holds the job's key lock, then write-locks the jobs.
func (j *Jobs) run(k string) {
	j.locks.LockKey(k)
	defer j.locks.UnlockKey(k)
	j.Lock()
	j.state[k]++
	j.Unlock()
}

// list takes each key's lock directly under the read lock.
func (j *Jobs) list() {
	j.RLock()
	defer j.RUnlock()
	for k := range j.state {
		j.locks.m[k].Lock() // want `lock order inversion: Locks.m\[\] then Jobs.RWMutex in Jobs.run \(perkey.go:\d+ -> perkey.go:\d+\) but Jobs.RWMutex then Locks.m\[\] in Jobs.list \(perkey.go:\d+ -> perkey.go:\d+\) \[lock-order\]`
		j.locks.m[k].Unlock()
	}
}

// entry is a reference-counted per-key lock.
type entry struct {
	mu   sync.Mutex
	refs int
}

// RefLocks keeps an entry per key while someone holds or waits for it.
type RefLocks struct {
	mu sync.Mutex
	m  map[string]*entry
}

func (l *RefLocks) Acquire(k string) {
	l.mu.Lock()
	e, ok := l.m[k]
	if !ok {
		e = &entry{}
		l.m[k] = e
	}
	e.refs++
	l.mu.Unlock()
	e.mu.Lock()
}

func (l *RefLocks) Release(k string) {
	l.mu.Lock()
	e := l.m[k]
	e.refs--
	if e.refs == 0 {
		delete(l.m, k)
	}
	l.mu.Unlock()
	e.mu.Unlock()
}

// Images pulls under a per-name lock and records under mu.
type Images struct {
	locks RefLocks
	mu    sync.Mutex
	tags  map[string]string
}

func (im *Images) pull(name string) {
	im.locks.Acquire(name)
	defer im.locks.Release(name)
	im.mu.Lock()
	im.tags[name] = "latest"
	im.mu.Unlock()
}

// prune holds mu and waits for each image's lock.
func (im *Images) prune() {
	im.mu.Lock()
	defer im.mu.Unlock()
	for name := range im.tags {
		im.locks.Acquire(name) // want `lock order inversion: entry.mu then Images.mu in Images.pull \(perkey.go:\d+ -> perkey.go:\d+\) but Images.mu then entry.mu in Images.prune \(perkey.go:\d+ -> perkey.go:\d+ via RefLocks.Acquire\) \[lock-order\]`
		delete(im.tags, name)
		im.locks.Release(name)
	}
}

// Table has a lock per row, taken under the table's read lock.
type Table struct {
	sync.RWMutex
	rows []*sync.Mutex
	n    int
}

func (t *Table) update(i int) {
	t.RLock()
	defer t.RUnlock()
	t.rows[i].Lock()
	t.n++
	t.rows[i].Unlock()
}

// grow holds a row's lock and write-locks the table: the opposite order.
func (t *Table) grow(i int) {
	row := t.rows[i]
	row.Lock()
	defer row.Unlock()
	t.Lock() // want `lock order inversion: Table.RWMutex then Table.rows\[\] in Table.update \(perkey.go:\d+ -> perkey.go:\d+\) but Table.rows\[\] then Table.RWMutex in Table.grow \(perkey.go:\d+ -> perkey.go:\d+\) \[lock-order\]`
	t.rows = append(t.rows, &sync.Mutex{})
	t.Unlock()
}

// Grid always takes the grid lock first, then a cell's. Silent.
type Grid struct {
	mu    sync.RWMutex
	cells [16]sync.Mutex
	n     int
}

func (g *Grid) set(i int) {
	g.mu.RLock()
	g.cells[i].Lock()
	g.n++
	g.cells[i].Unlock()
	g.mu.RUnlock()
}

func (g *Grid) swap(i, j int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.cells[i].Lock()
	g.cells[j].Lock()
	g.cells[j].Unlock()
	g.cells[i].Unlock()
}

var _ = []any{(*Store).put, (*Store).flush, (*Cache).put, (*Cache).flush, (*Cache).move, (*Cache).bump, (*Jobs).run, (*Jobs).list, (*Images).pull, (*Images).prune, (*Table).update, (*Table).grow, (*Grid).set, (*Grid).swap}
