// Package unpublished: the lock of an object nobody else can see yet
// (created here, not yet published) orders nothing: no other goroutine can
// hold it. Once the object is published, its lock orders as any other.
package unpublished

import "sync"

type Server struct {
	cfgMu sync.RWMutex
	cfg   int

	mu    sync.Mutex
	conns []*Conn
	subs  []*Subscriber
}

type Conn struct {
	srv *Server
	mu  sync.Mutex
	cfg int
	gen int
}

// newConn holds c.mu while it reads the config, but c is still private:
// no edge Conn.mu -> Server.cfgMu. Silent.
func (s *Server) newConn() *Conn {
	c := &Conn{srv: s}
	c.mu.Lock()
	s.cfgMu.RLock()
	c.cfg = s.cfg
	s.cfgMu.RUnlock()
	c.mu.Unlock()
	s.register(c) // published here
	return c
}

// register stores the connection where other goroutines find it.
func (s *Server) register(c *Conn) {
	s.mu.Lock()
	s.conns = append(s.conns, c)
	s.mu.Unlock()
}

func (s *Server) snapshot() []*Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Conn(nil), s.conns...)
}

// Reload takes every published connection's lock under cfgMu.
func (s *Server) Reload(cfg int) {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	s.cfg = cfg
	for _, c := range s.snapshot() {
		c.mu.Lock()
		c.gen++
		c.mu.Unlock()
	}
}

// accept makes a connection per iteration and publishes it at the end of
// the iteration: in the next iteration the new connection is private
// again (publication is per allocation). Silent.
func (s *Server) accept(n int) {
	for i := 0; i < n; i++ {
		c := &Conn{srv: s}
		c.mu.Lock()
		s.cfgMu.RLock()
		c.cfg = s.cfg
		s.cfgMu.RUnlock()
		c.mu.Unlock()
		go c.serve()
	}
}

func (c *Conn) serve() {}

// init is a helper on the private object: calling it publishes nothing.
func (c *Conn) init(s *Server) {
	c.mu.Lock()
	c.srv = s
	c.mu.Unlock()
}

// newViaHelper locks the private object through a helper. Silent.
func (s *Server) newViaHelper() *Conn {
	c := &Conn{}
	c.init(s)
	c.mu.Lock()
	s.cfgMu.RLock()
	c.cfg = s.cfg
	s.cfgMu.RUnlock()
	c.mu.Unlock()
	s.register(c)
	return c
}

// refresh locks the connection after registering it: other goroutines
// (Reload) can hold cfgMu and wait for c.mu meanwhile.
func (s *Server) refresh() *Conn {
	c := &Conn{srv: s}
	s.register(c)
	c.mu.Lock()
	s.cfgMu.RLock() // want `lock order inversion: Server.cfgMu then Conn.mu in Server.Reload .* but Conn.mu then Server.cfgMu in Server.refresh`
	c.cfg = s.cfg
	s.cfgMu.RUnlock()
	c.mu.Unlock()
	return c
}

// Subscriber registers itself while holding its own lock: the
// registration takes the server's lock with the subscriber's held, and the
// subscriber is visible to others from that call on.
type Subscriber struct {
	mu  sync.Mutex
	srv *Server
}

func (s *Server) add(sub *Subscriber) {
	s.mu.Lock()
	s.subs = append(s.subs, sub)
	s.mu.Unlock()
}

func (s *Server) notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sub := range s.subs {
		sub.mu.Lock()
		sub.mu.Unlock()
	}
}

func (s *Server) subscribe() *Subscriber {
	sub := &Subscriber{srv: s}
	sub.mu.Lock()
	defer sub.mu.Unlock()
	s.add(sub) // want `lock order inversion: Server.mu then Subscriber.mu in Server.notify .* but Subscriber.mu then Server.mu in Server.subscribe`
	return sub
}

var _ = []any{(*Server).notify, (*Server).subscribe, (*Server).newConn, (*Server).accept, (*Server).newViaHelper, (*Server).refresh}
