package ifaceeffect

import "sync"

type Doer interface{ Do() int }

// Client is its own lock.
type Client struct {
	sync.RWMutex
	n int
}

func (c *Client) Do() int {
	c.RLock()
	defer c.RUnlock()
	return c.n
}

// Sync calls Do through an interface holding the client itself: the
// dynamic type is known, so Do's RLock is a recursive read lock.
func (c *Client) Sync() int {
	c.Lock()
	defer c.Unlock()
	var d Doer = c
	return d.Do() // want `Client.RWMutex locked again by Client.Do \(at iface.go:14\) while held since iface.go:22: self-deadlock \[double-lock\]`
}

// Correct: the interface call comes after the unlock.
func (c *Client) Refresh() int {
	c.Lock()
	c.n++
	c.Unlock()
	var d Doer = c
	return d.Do()
}

// Store and Mirror are the package's only Lockable implementations, and
// both take the lock of the value the call is made on.
type Lockable interface {
	Acquire()
	Release()
	Touch()
}

type Store struct {
	mu sync.Mutex
	n  int
}

func (s *Store) Acquire() { s.mu.Lock() }
func (s *Store) Release() { s.mu.Unlock() }
func (s *Store) Touch() {
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
}

type Mirror struct {
	mu sync.Mutex
	n  int
}

func (m *Mirror) Acquire() { m.mu.Lock() }
func (m *Mirror) Release() { m.mu.Unlock() }
func (m *Mirror) Touch() {
	m.mu.Lock()
	m.n++
	m.mu.Unlock()
}

var all = []Lockable{&Store{}, &Mirror{}}

// The effects of Acquire and Release reach the caller: no leak, no
// unlock of a lock not held; Touch under Acquire is a double lock.
func touchAll(l Lockable) {
	l.Acquire()
	l.Touch() // want `Store.mu or Mirror.mu locked again by Lockable.Touch \(at iface.go:53\) while held since iface.go:76: self-deadlock \[double-lock\]`
	l.Release()
}

func visit(l Lockable) {
	l.Acquire()
	defer l.Release()
}

func touchAfter(l Lockable) {
	l.Acquire()
	l.Release()
	l.Touch()
}
