package backpointer

import "sync"

// An object kept in a field, made with a pointer back to the object
// holding it (c.tr = newTransport(c)), reaches that same object through
// the pointer: c.tr.owner is c. A handler interface set the same way too.
type CloseHandler interface{ OnClose() }

type transport struct {
	mu      sync.Mutex
	owner   *conn
	onClose CloseHandler
}

func newTransport(c *conn) *transport { return &transport{owner: c, onClose: c} }

func (t *transport) close() { t.onClose.OnClose() }

func (t *transport) release() { t.owner.release() }

type conn struct {
	mu    sync.Mutex
	tr    *transport
	state int
}

func (c *conn) connect() {
	c.mu.Lock()
	c.tr = newTransport(c)
	c.mu.Unlock()
}

func (c *conn) OnClose() {
	c.mu.Lock()
	c.state = 0
	c.mu.Unlock()
}

func (c *conn) release() {
	c.mu.Lock()
	c.tr = nil
	c.mu.Unlock()
}

func (c *conn) tearDown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tr.close() // want `conn.mu locked again by transport.close -> conn.OnClose \(at owner.go:35\) while held since owner.go:47: self-deadlock \[double-lock\]`
}

func (c *conn) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tr.release() // want `conn.mu locked again by transport.release -> conn.release \(at owner.go:41\) while held since owner.go:53: self-deadlock \[double-lock\]`
}

// Correct: the transport is closed after the lock is let go.
func (c *conn) shutdown() {
	c.mu.Lock()
	tr := c.tr
	c.mu.Unlock()
	tr.close()
}

// A field whose objects may point elsewhere: the link is set again after
// creation (a session moves to another server), so s.cur.srv is not s's.
type server struct {
	mu  sync.Mutex
	cur *session
}

type session struct {
	srv *server
}

func (s *server) open() {
	s.mu.Lock()
	s.cur = &session{srv: s}
	s.mu.Unlock()
}

func (x *session) move(to *server) { x.srv = to }

func (x *session) touch() {
	x.srv.mu.Lock()
	x.srv.mu.Unlock()
}

func (s *server) ping() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur.touch()
}

var _ = []any{(*conn).connect, (*conn).tearDown, (*conn).drop, (*conn).shutdown, (*server).open, (*session).move, (*server).ping}
