// Package lockeralias: a sync.Locker made from a mutex is that mutex.
// mu.RLocker() is mu's read side (its Lock is mu.RLock), and the L of a
// Cond made by sync.NewCond(l) is l, whatever field the Cond is kept in.
package lockeralias

import "sync"

// Cache waits for its first load on a Cond built on the read side of mu.
type Cache struct {
	mu     sync.RWMutex
	loaded *sync.Cond
	done   bool
	items  map[string]int //confined:guardedby mu
}

func NewCache() *Cache {
	c := &Cache{items: map[string]int{}}
	c.loaded = sync.NewCond(c.mu.RLocker())
	return c
}

func (c *Cache) get(k string) int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.items[k]
}

func (c *Cache) load(items map[string]int) {
	c.mu.Lock()
	c.items, c.done = items, true
	c.mu.Unlock()
	c.loaded.Broadcast()
}

// waitGet holds mu's read side through the Cond's L and read-locks mu
// again in get: a writer queued in between deadlocks both.
func (c *Cache) waitGet(k string) int {
	c.loaded.L.Lock()
	defer c.loaded.L.Unlock()
	for !c.done {
		c.loaded.Wait()
	}
	return c.get(k) // want `RLock of Cache.mu by Cache.get \(at lockeralias.go:\d+\) while already read-locked since lockeralias.go:\d+: deadlocks behind a waiting writer \[double-lock\]`
}

// waitLookup reads the map under the Cond's L itself: the guard is held
// (read), and nothing is locked twice. Silent.
func (c *Cache) waitLookup(k string) int {
	c.loaded.L.Lock()
	defer c.loaded.L.Unlock()
	for !c.done {
		c.loaded.Wait()
	}
	return c.items[k]
}

// keys read-locks through an RLocker, then calls get: a recursive read lock.
func (c *Cache) keys() []string {
	rl := c.mu.RLocker()
	rl.Lock()
	defer rl.Unlock()
	var out []string
	for k := range c.items {
		if c.get(k) > 0 { // want `RLock of Cache.mu by Cache.get \(at lockeralias.go:\d+\) while already read-locked since lockeralias.go:\d+: deadlocks behind a waiting writer \[double-lock\]`
			out = append(out, k)
		}
	}
	return out
}

// reset takes the write lock while holding the read side: an upgrade.
func (c *Cache) reset() {
	rl := c.mu.RLocker()
	rl.Lock()
	if len(c.items) > 0 {
		c.mu.Lock() // want `Lock of Cache.mu while read-locked since lockeralias.go:\d+: a read lock cannot be upgraded, this deadlocks \[lock-upgrade\]`
		c.done = false
		c.mu.Unlock()
	}
	rl.Unlock()
}

// size releases the read side before anything else takes mu. Silent.
func (c *Cache) size() int {
	rl := c.mu.RLocker()
	rl.Lock()
	n := len(c.items)
	rl.Unlock()
	c.mu.Lock()
	c.items["size"] = n
	c.mu.Unlock()
	return n
}

// Queue's Cond is built on the queue's mutex.
type Queue struct {
	mu    sync.Mutex
	cond  *sync.Cond
	items []int
}

func NewQueue() *Queue {
	q := &Queue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// drain holds q.mu through the Cond's L and calls Len, which locks it again.
func (q *Queue) drain() []int {
	q.cond.L.Lock()
	defer q.cond.L.Unlock()
	for q.Len() == 0 { // want `Queue.mu locked again by Queue.Len \(at lockeralias.go:\d+\) while held since lockeralias.go:\d+: self-deadlock \[double-lock\]`
		q.cond.Wait()
	}
	out := q.items
	q.items = nil
	return out
}

// take uses the Cond's L and the queue's fields directly. Silent.
func (q *Queue) take() int {
	q.cond.L.Lock()
	for len(q.items) == 0 {
		q.cond.Wait()
	}
	v := q.items[0]
	q.items = q.items[1:]
	q.cond.L.Unlock()
	return v
}

// Pool keeps its Cond by value, its L set to the pool's mutex.
type Pool struct {
	mu   sync.Mutex
	cond sync.Cond
	free []int
}

func NewPool() *Pool {
	p := &Pool{}
	p.cond.L = &p.mu
	return p
}

func (p *Pool) size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.free)
}

func (p *Pool) get() int {
	p.cond.L.Lock()
	defer p.cond.L.Unlock()
	for p.size() == 0 { // want `Pool.mu locked again by Pool.size \(at lockeralias.go:\d+\) while held since lockeralias.go:\d+: self-deadlock \[double-lock\]`
		p.cond.Wait()
	}
	v := p.free[0]
	p.free = p.free[1:]
	return v
}

// Ring's Cond is a composite literal on the ring's mutex.
type Ring struct {
	mu   sync.Mutex
	cond *sync.Cond
	n    int
}

func NewRing() *Ring {
	r := &Ring{}
	r.cond = &sync.Cond{L: &r.mu}
	return r
}

func (r *Ring) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

func (r *Ring) wait() {
	r.cond.L.Lock()
	for r.count() == 0 { // want `Ring.mu locked again by Ring.count \(at lockeralias.go:\d+\) while held since lockeralias.go:\d+: self-deadlock \[double-lock\]`
		r.cond.Wait()
	}
	r.cond.L.Unlock()
}

// Gate is given its Locker by the caller: unknown, never a double lock.
type Gate struct {
	cond *sync.Cond
	mu   sync.Mutex
	open bool
}

func NewGate(l sync.Locker) *Gate { return &Gate{cond: sync.NewCond(l)} }

func (g *Gate) wait() {
	g.cond.L.Lock()
	g.mu.Lock()
	g.open = true
	g.mu.Unlock()
	g.cond.L.Unlock()
}

var _ = []any{(*Cache).waitGet, (*Cache).waitLookup, (*Cache).keys, (*Cache).reset, (*Cache).size, (*Cache).load, (*Queue).drain, (*Queue).take, (*Pool).get, (*Ring).wait, (*Gate).wait}
