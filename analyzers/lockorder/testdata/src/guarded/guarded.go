package guarded

import "sync"

type Cache struct {
	mu    sync.RWMutex
	n     int            //confined:guardedby mu
	m     map[string]int //confined:guardedby mu
	items []int          //confined:guardedby mu
	free  int
}

func (c *Cache) readShared() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.n + len(c.m) + len(c.items) // silent: reads under RLock
}

func (c *Cache) writeShared() {
	c.mu.RLock()
	defer c.mu.RUnlock()
	c.n++ // want `write to Cache.n with Cache.mu only read-locked \(since guarded.go:20\): writes need Lock \[guardedby-write-shared\]`
}

func (c *Cache) mapShared(k string) {
	c.mu.RLock()
	c.m[k] = 1     // want `write to Cache.m with Cache.mu only read-locked \(since guarded.go:26\): writes need Lock \[guardedby-write-shared\]`
	delete(c.m, k) // want `write to Cache.m with Cache.mu only read-locked \(since guarded.go:26\): writes need Lock \[guardedby-write-shared\]`
	c.mu.RUnlock()
}

func (c *Cache) appendShared(x int) {
	c.mu.RLock()
	c.items = append(c.items, x) // want `write to Cache.items with Cache.mu only read-locked \(since guarded.go:33\): writes need Lock \[guardedby-write-shared\]`
	c.mu.RUnlock()
}

func (c *Cache) addrShared() *int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return &c.n // want `write to Cache.n with Cache.mu only read-locked \(since guarded.go:39\): writes need Lock \[guardedby-write-shared\]`
}

func (c *Cache) unlocked() int {
	c.free++   // silent: not guarded
	return c.n // want `read of Cache.n without holding Cache.mu \[guardedby\]`
}

func (c *Cache) writeUnlocked() {
	c.n = 3 // want `write to Cache.n without holding Cache.mu \[guardedby\]`
}

func (c *Cache) writeLocked(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	c.m[k] = c.n
	delete(c.m, "x")
	c.items = append(c.items, 1)
}

// Construction is not an access.
func New() *Cache {
	c := &Cache{n: 1, m: map[string]int{}}
	c.items = nil
	return c
}

// Package vars.
var gmu sync.Mutex

//confined:guardedby gmu
var total int

func bump() {
	total++ // want `write to total without holding gmu \[guardedby\]`
}

func bumpOK() {
	gmu.Lock()
	total++
	gmu.Unlock()
}
