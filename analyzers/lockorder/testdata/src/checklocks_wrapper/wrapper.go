// Package checklocks_wrapper: a mutex wrapper type (as gVisor generates
// one per lock) whose field is the guard the annotations name is the
// lock: its Lock, RLock and NestedLock lock that field, and two fields of
// the same wrapper type are two lock classes.
package checklocks_wrapper

import "sync"

type connMutex struct{ mu sync.RWMutex }

var lockCalls int

// +checklocksignore
func (m *connMutex) Lock() { lockCalls++; m.mu.Lock() }

// +checklocksignore
func (m *connMutex) Unlock() { m.mu.Unlock() }

// +checklocksignore
func (m *connMutex) RLock() { m.mu.RLock() }

// +checklocksignore
func (m *connMutex) RUnlock() { m.mu.RUnlock() }

// RLockBypass read-locks without lock-order bookkeeping (gVisor's
// generated mutexes have one): a Locker-named method, the type is still a
// pure wrapper.
//
// +checklocksignore
func (m *connMutex) RLockBypass() { m.mu.RLock() }

// +checklocksignore
func (m *connMutex) RUnlockBypass() { m.mu.RUnlock() }

// +checklocksignore
func (m *connMutex) NestedLock(i int) { m.mu.Lock() }

// +checklocksignore
func (m *connMutex) NestedUnlock(i int) { m.mu.Unlock() }

// +checklocksalias:sub.owner.mu=mu
type conn struct {
	mu connMutex
	// +checklocks:mu
	state int
	// +checklocks:mu
	sub subState
}

type subState struct {
	owner *conn
	n     int
}

// +checklocks:s.owner.mu
func (s *subState) bump() { s.n++ }

func (s *subState) get() int { return s.n }

func (c *conn) set(v int) {
	c.mu.Lock()
	c.state = v
	c.mu.Unlock()
}

func (c *conn) read() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.state + c.sub.get() // a method call on a guarded field reads it
}

func (c *conn) nested(v int) {
	c.mu.NestedLock(1)
	c.state = v
	c.mu.NestedUnlock(1)
}

func (c *conn) bumpSub() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sub.bump() // igmp.ep.mu through the alias is c.mu
}

func (c *conn) racy(v int) {
	c.state = v // want `write to conn.state without holding conn.mu \[guardedby\]`
}

func (c *conn) bumpUnlocked() {
	c.sub.bump() // want `read of conn.sub without holding conn.mu \[guardedby\]` `call to subState.bump requires conn.mu held exclusively, but it is not held here \[requires\]`
}

func (c *conn) writeUnderRead(v int) {
	c.mu.RLock()
	c.state = v // want `write to conn.state with conn.mu only read-locked .*\[guardedby-write-shared\]`
	c.mu.RUnlock()
}

func (c *conn) twice() {
	c.mu.Lock()
	c.mu.Lock() // want `conn.mu locked again while held since wrapper.go:\d+: self-deadlock \[double-lock\]`
	c.mu.Unlock()
	c.mu.Unlock()
}

// Two fields of one wrapper type are two locks.
type pair struct {
	a connMutex
	b connMutex
	// +checklocks:a
	x int
	// +checklocks:b
	y int
}

func (p *pair) ab() {
	p.a.Lock()
	p.b.Lock()
	p.x, p.y = p.y, p.x
	p.b.Unlock()
	p.a.Unlock()
}

func (p *pair) ba() {
	p.b.Lock()
	p.a.Lock() // want `lock order inversion: pair.a then pair.b .*\[lock-order\]`
	p.x = p.y
	p.a.Unlock()
	p.b.Unlock()
}
