// Package releasefunc: helpers that lock and return the function that
// unlocks, as a closure or as the lock's own method value. The returned
// function takes the unlock over, whichever form it has: the helper leaves
// nothing held for its caller, and a caller that runs the release (deferred,
// directly, or `defer c.lock()()`) leaves nothing held either.
package releasefunc

import "sync"

type Client struct {
	mu    sync.Mutex
	conns int
}

func (c *Client) inc() {
	c.mu.Lock()
	c.conns++
	c.mu.Unlock()
}

func (c *Client) lockClosure() func() {
	c.mu.Lock()
	return func() { c.mu.Unlock() }
}

func (c *Client) lockValue() func() {
	c.mu.Lock()
	return c.mu.Unlock
}

func (c *Client) lockPair() (*Client, func()) {
	c.mu.Lock()
	return c, c.mu.Unlock
}

func (c *Client) deferValue() {
	unlock := c.lockValue()
	defer unlock()
	c.conns++
}

func (c *Client) deferCall() {
	defer c.lockValue()()
	c.conns++
}

func (c *Client) direct() {
	unlock := c.lockValue()
	c.conns++
	unlock()
}

func (c *Client) pair() {
	cl, unlock := c.lockPair()
	cl.conns++
	unlock()
}

func (c *Client) closure() {
	defer c.lockClosure()()
	c.conns++
}

// Each helper returns with nothing held: no call here is a double lock.
func sequence(c *Client) {
	c.deferValue()
	c.inc()
	c.deferCall()
	c.inc()
	c.direct()
	c.inc()
	c.pair()
	c.inc()
	c.closure()
	c.inc()
}

// A method value kept locally is still the lock's unlock, called later.
func localValue(c *Client) {
	c.mu.Lock()
	unlock := c.mu.Unlock
	c.inc() // want `Client.mu locked again by Client.inc \(at releasefunc.go:16\) while held since releasefunc.go:80: self-deadlock \[double-lock\]`
	unlock()
}

// The caller of such a helper holds the lock until it runs the release:
// a lock taken in between is taken again.
func heldUntilRelease(c *Client) {
	defer c.lockValue()()
	c.inc() // want `Client.mu locked again by Client.inc \(at releasefunc.go:16\) while held since releasefunc.go:\d+: self-deadlock \[double-lock\]`
}

func heldUntilCalled(c *Client) {
	unlock := c.lockClosure()
	c.conns++
	c.inc() // want `Client.mu locked again by Client.inc`
	unlock()
	c.inc()
}

// A read side handed back through a function that runs its parameter
// (helm's `defer unlock(mem.rlock())`).
type Store struct {
	sync.RWMutex
	items map[string]int
}

func (s *Store) rlock() func() {
	s.RLock()
	return func() { s.RUnlock() }
}

func (s *Store) wlock() func() {
	s.Lock()
	return func() { s.Unlock() }
}

func unlock(release func()) { release() }

func (s *Store) Get(k string) int {
	defer unlock(s.rlock())
	return s.items[k]
}

func (s *Store) Sum(keys []string) int {
	defer unlock(s.rlock())
	n := 0
	for _, k := range keys {
		n += s.Get(k) // want `RLock of Store.RWMutex by Store.Get -> Store.rlock .*deadlocks behind a waiting writer`
	}
	return n
}

func (s *Store) Put(k string, v int) {
	defer unlock(s.wlock())
	s.items[k] = v
}

// A release kept for later may run anywhere: the caller is not taken to
// hold the lock after the helper returns. Silent.
type Session struct {
	c       *Client
	release func()
}

func (se *Session) Begin() {
	se.release = se.c.lockValue()
}

func (se *Session) End() {
	se.release()
	se.c.inc()
}

// A handle returned with the release in a field takes the lock over:
// the checkout holding the session's lock on success only is no
// inconsistent return. Silent.
type session struct {
	mu   sync.Mutex
	data map[string]int
}

type Handle struct {
	s       *session
	release func()
}

func (h *Handle) End() { h.release() }

type Manager struct {
	mu       sync.Mutex
	sessions map[string]*session
}

func (m *Manager) Checkout(id string) (*Handle, bool) {
	m.mu.Lock()
	s, ok := m.sessions[id]
	m.mu.Unlock()
	if !ok {
		return nil, false
	}
	s.mu.Lock()
	return &Handle{s: s, release: s.mu.Unlock}, true
}
