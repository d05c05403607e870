// Project: syndtr/goleveldb (leveldb/cache/cache.go, leveldb/cache/lru.go), approximate, around 2016-2019.
// Bug: Cache.CloseWeak held the cache map lock r.mu (write) while it asked the Cacher to EvictAll; the LRU cacher releases the handles it holds, and releasing the last reference runs Node.unrefLocked, which takes r.mu.RLock to delete the node from the map, so the closing goroutine deadlocks on its own lock (the fix releases r.mu before calling into the cacher, "// Avoid deadlock.").
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Cacher provides interface to implements a caching functionality.
type Cacher interface {
	Capacity() int
	Promote(n *Node)
	Ban(n *Node)
	EvictAll()
	Close() error
}

type Value interface{}

type Node struct {
	r         *Cache
	ns, key   uint64
	size      int
	value     Value
	ref       int32
	onDel     []func()
	CacheData *lruNode
}

func (n *Node) NS() uint64   { return n.ns }
func (n *Node) Key() uint64  { return n.key }
func (n *Node) Size() int    { return n.size }
func (n *Node) Value() Value { return n.value }
func (n *Node) Ref() int32   { return atomic.LoadInt32(&n.ref) }
func (n *Node) GetHandle() *Handle {
	if atomic.AddInt32(&n.ref, 1) <= 1 {
		panic("BUG: Node.GetHandle on zero ref")
	}
	return &Handle{n: n}
}

// unrefLocked is called when a handle is released; it takes the cache map
// lock itself.
func (n *Node) unrefLocked() {
	if atomic.AddInt32(&n.ref, -1) == 0 {
		n.r.mu.RLock()
		if !n.r.closed {
			n.r.delete(n)
		}
		n.r.mu.RUnlock()
	}
}

type Handle struct{ n *Node }

func (h *Handle) Value() Value { return h.n.value }
func (h *Handle) Release() {
	if n := h.n; n != nil {
		h.n = nil
		n.unrefLocked()
	}
}

type nodeKey struct{ ns, key uint64 }

// Cache is a 'cache map'.
type Cache struct {
	mu     sync.RWMutex
	nodes  map[nodeKey]*Node
	mapMu  sync.Mutex // stands in for the lock-free bucket table
	cacher Cacher
	closed bool
}

func NewCache(cacher Cacher) *Cache {
	return &Cache{nodes: make(map[nodeKey]*Node), cacher: cacher}
}

// Get gets 'cache node' with the given namespace and key, creating it with
// setFunc if it does not exist.
func (r *Cache) Get(ns, key uint64, setFunc func() (size int, value Value)) *Handle {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return nil
	}
	r.mapMu.Lock()
	n, ok := r.nodes[nodeKey{ns, key}]
	if !ok {
		n = &Node{r: r, ns: ns, key: key}
		n.size, n.value = setFunc()
		r.nodes[nodeKey{ns, key}] = n
	}
	atomic.AddInt32(&n.ref, 1)
	r.mapMu.Unlock()
	if r.cacher != nil {
		r.cacher.Promote(n)
	}
	return &Handle{n: n}
}

func (r *Cache) delete(n *Node) {
	r.mapMu.Lock()
	delete(r.nodes, nodeKey{n.ns, n.key})
	r.mapMu.Unlock()
	for _, f := range n.onDel {
		f()
	}
}

// CloseWeak closes the 'cache map' and evicts all 'cache node' from cacher,
// but unlike Close it doesn't forcefully release 'cache node'.
func (r *Cache) CloseWeak() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.closed = true
	}
	if r.cacher != nil {
		r.cacher.EvictAll()
		if err := r.cacher.Close(); err != nil {
			return err
		}
	}
	return nil
}

type lruNode struct {
	n          *Node
	h          *Handle
	prev, next *lruNode
}

type lru struct {
	mu       sync.Mutex
	capacity int
	used     int
	recent   []*lruNode
}

func NewLRU(capacity int) Cacher { return &lru{capacity: capacity} }

func (r *lru) Capacity() int { r.mu.Lock(); defer r.mu.Unlock(); return r.capacity }

func (r *lru) Promote(n *Node) {
	r.mu.Lock()
	if n.CacheData == nil {
		rn := &lruNode{n: n, h: n.GetHandle()}
		n.CacheData = rn
		r.recent = append(r.recent, rn)
		r.used += n.Size()
	}
	r.mu.Unlock()
}

func (r *lru) Ban(n *Node) {}

func (r *lru) EvictAll() {
	r.mu.Lock()
	back := r.recent
	for _, rn := range back {
		rn.n.CacheData = nil
	}
	r.recent, r.used = nil, 0
	r.mu.Unlock()
	for _, rn := range back {
		rn.h.Release()
	}
}

func (r *lru) Close() error { return nil }

func main() {
	// tOps-style table cache: file number -> open table reader.
	c := NewCache(NewLRU(500))
	for fd := uint64(1); fd <= 3; fd++ {
		h := c.Get(0, fd, func() (int, Value) { return 1, fmt.Sprintf("table-%d.ldb", fd) })
		fmt.Println("opened", h.Value())
		h.Release() // the LRU keeps the only remaining reference
	}
	// DB.Close -> tOps.close -> cache.CloseWeak
	if err := c.CloseWeak(); err != nil {
		fmt.Println("close:", err)
	}
	fmt.Println("cache closed")
}
