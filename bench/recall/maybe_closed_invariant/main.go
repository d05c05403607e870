// Pattern: a callee returns early on a "closed" state check before taking the
// lock. The caller that holds the lock (Close) sets the closed flag first, so
// the callee's locking path is never reached while the lock is held.
// Modelled on net/http's Server.trackConn / grpc-go's Server.removeConn,
// where connection teardown called from Close must not re-lock s.mu.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type conn struct {
	id       int
	srv      *Server
	quit     chan struct{}
	quitOnce sync.Once
}

// close never takes s.mu itself; it may be called with or without s.mu held.
func (c *conn) close() {
	c.quitOnce.Do(func() { close(c.quit) })
	c.srv.removeConn(c)
}

func (c *conn) serve(wg *sync.WaitGroup) {
	defer wg.Done()
	for i := 0; ; i++ {
		select {
		case <-c.quit:
			return
		case <-time.After(100 * time.Microsecond):
			if i == c.id%5+3 { // connection finishes on its own
				c.close()
				return
			}
		}
	}
}

type Server struct {
	mu     sync.Mutex
	conns  map[*conn]struct{}
	closed atomic.Bool // false->true only, and only while holding mu
	wg     sync.WaitGroup
	served int
}

func (s *Server) addConn(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return false
	}
	s.conns[c] = struct{}{}
	s.served++
	return true
}

// removeConn: if the server is closed, Close (which holds s.mu) owns the
// conns map and discards it, so there is nothing to do and no lock is taken.
func (s *Server) removeConn(c *conn) {
	if s.closed.Load() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c) // no-op on a nil map if Close won the race
}

func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed.Store(true) // must precede the c.close() calls below
	for c := range s.conns {
		c.close() // -> removeConn -> early return, no re-lock
	}
	s.conns = nil
}

func main() {
	s := &Server{conns: make(map[*conn]struct{})}
	for i := 0; i < 40; i++ {
		c := &conn{id: i, srv: s, quit: make(chan struct{})}
		if s.addConn(c) {
			s.wg.Add(1)
			go c.serve(&s.wg)
		}
		if i == 25 {
			time.Sleep(500 * time.Microsecond)
		}
	}
	s.Close()
	// Connections accepted after Close are refused.
	late := &conn{id: 99, srv: s, quit: make(chan struct{})}
	fmt.Println("late accepted:", s.addConn(late))
	s.wg.Wait()
	s.mu.Lock()
	fmt.Println("served:", s.served, "remaining:", len(s.conns))
	s.mu.Unlock()
}
