// Package retake: a callee that releases the caller's lock and takes it
// again retakes it under every other lock the caller still holds: that is
// an order edge too.
package retake

import (
	"sync"
	"time"
)

type Server struct {
	mu    sync.Mutex
	items []*Item
}

type Item struct {
	mu sync.Mutex
	n  int
}

// slow gives up the server lock around slow work: called with s.mu held.
func (s *Server) slow() {
	s.mu.Unlock()
	time.Sleep(time.Millisecond)
	s.mu.Lock()
}

// update holds the item while slow retakes the server lock: the item's
// lock then the server's, against the server's then the item's above.
func (s *Server) update(it *Item) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it.mu.Lock()
	s.slow() // want `lock order inversion: Server.mu then Item.mu in Server.update .* but Item.mu then Server.mu in Server.update .*via Server.slow`
	it.n++
	it.mu.Unlock()
}

// updateFirst finishes with the item before slow. Silent on its own.
func (s *Server) updateFirst(it *Item) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it.mu.Lock()
	it.n++
	it.mu.Unlock()
	s.slow()
}

var _ = []any{(*Server).update, (*Server).updateFirst}
