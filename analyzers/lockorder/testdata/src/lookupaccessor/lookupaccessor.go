// Package lookupaccessor: a method that finds an object in its receiver's
// map by a key (creating and keeping it on a miss) returns one object for
// one receiver and key, so a lock reached through two calls of it with the
// same key is one lock (olric's lazy eviction under a fragment's read
// lock). An accessor whose result can differ between calls (a round-robin
// pick, a fresh object it does not keep) names nothing.
package lookupaccessor

import "sync"

type fragment struct {
	sync.RWMutex
	storage map[uint64]string
}

type partition struct {
	mu        sync.Mutex
	fragments map[string]*fragment
}

// fragment looks the named fragment up, making and keeping it on a miss.
func (p *partition) fragment(name string) *fragment {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, ok := p.fragments[name]
	if !ok {
		f = &fragment{storage: map[uint64]string{}}
		p.fragments[name] = f
	}
	return f
}

type dmap struct {
	name  string
	parts []*partition
}

func (dm *dmap) getFragment(hkey uint64) *fragment {
	return dm.parts[hkey%uint64(len(dm.parts))].fragment(dm.name)
}

func (dm *dmap) deleteOnFragment(hkey uint64) {
	f := dm.getFragment(hkey)
	f.Lock()
	defer f.Unlock()
	delete(f.storage, hkey)
}

// get evicts an expired key under the fragment's read lock.
func (dm *dmap) get(hkey uint64, expired bool) string {
	f := dm.getFragment(hkey)
	f.RLock()
	defer f.RUnlock()
	if expired {
		dm.deleteOnFragment(hkey) // want `Lock of fragment.RWMutex by dmap.deleteOnFragment \(at lookupaccessor.go:\d+\) while read-locked since lookupaccessor.go:\d+: a read lock cannot be upgraded, this deadlocks \[lock-upgrade\]`
		return ""
	}
	return f.storage[hkey]
}

// getFixed lets the read lock go before it evicts. Silent.
func (dm *dmap) getFixed(hkey uint64, expired bool) string {
	f := dm.getFragment(hkey)
	f.RLock()
	v := f.storage[hkey]
	f.RUnlock()
	if expired {
		dm.deleteOnFragment(hkey)
	}
	return v
}

// move holds one key's fragment and evicts another key's: the keys differ,
// so the fragments may too. Silent.
func (dm *dmap) move(from, to uint64) {
	f := dm.getFragment(from)
	f.RLock()
	defer f.RUnlock()
	dm.deleteOnFragment(to)
}

type conn struct {
	sync.Mutex
	n int
}

type pool struct {
	conns []*conn
	next  int
}

// pick hands out connections in turn: two calls differ.
func (p *pool) pick() *conn {
	c := p.conns[p.next%len(p.conns)]
	p.next++
	return c
}

// fresh makes a connection each call.
func (p *pool) fresh(n int) *conn { return &conn{n: n} }

func (p *pool) bump() {
	c := p.pick()
	c.Lock()
	c.n++
	c.Unlock()
}

// both holds one picked connection and bumps the next one. Silent.
func (p *pool) both() {
	c := p.pick()
	c.Lock()
	defer c.Unlock()
	p.bump()
}

func (p *pool) touch(n int) {
	c := p.fresh(n)
	c.Lock()
	c.n++
	c.Unlock()
}

// twoFresh holds one fresh connection and makes another. Silent.
func (p *pool) twoFresh(n int) {
	c := p.fresh(n)
	c.Lock()
	defer c.Unlock()
	p.touch(n)
}

type registry struct {
	conns map[string]*conn
}

// register makes a connection and keeps it under its address, replacing
// any before it: each call returns a new object.
func (r *registry) register(addr string) *conn {
	c := &conn{}
	r.conns[addr] = c
	return c
}

func (r *registry) dial(addr string) {
	c := r.register(addr)
	c.Lock()
	c.n++
	c.Unlock()
}

// redial holds a new connection and dials the address again: another
// connection. Silent.
func (r *registry) redial(addr string) {
	c := r.register(addr)
	c.Lock()
	defer c.Unlock()
	r.dial(addr)
}
