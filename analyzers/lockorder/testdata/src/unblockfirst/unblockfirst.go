// Package unblockfirst: a lock held across a wait deadlocks only if every
// goroutine that could end the wait must take the lock first.
package unblockfirst

import "sync"

// Sub: deliver waits under postMu for a reader or for closing; closewait
// closes closing before it takes postMu. Silent.
type Sub struct {
	closeMu sync.Mutex
	closed  bool
	closing chan struct{}
	postMu  sync.RWMutex
	postC   chan int
}

func (s *Sub) deliver(v int) {
	s.postMu.RLock()
	defer s.postMu.RUnlock()
	select {
	case s.postC <- v:
	case <-s.closing:
	}
}

func (s *Sub) closewait() {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return
	}
	close(s.closing)
	s.closed = true
	s.postMu.Lock()
	close(s.postC)
	s.postC = nil
	s.postMu.Unlock()
}

func RunSub(s *Sub) {
	go s.closewait()
	s.deliver(1)
}

// Hub: Stop takes mu before it closes done, so Wait holding mu across the
// receive never ends.
type Hub struct {
	mu    sync.Mutex
	done  chan struct{}
	state int
}

func (h *Hub) Wait() {
	h.mu.Lock()
	defer h.mu.Unlock()
	<-h.done // want `Hub.mu \(taken at unblockfirst.go:\d+\) is held across a channel receive`
}

func (h *Hub) Stop() {
	h.mu.Lock()
	h.state = 1
	h.mu.Unlock()
	close(h.done)
}

func RunHub(h *Hub) {
	go h.Stop()
	h.Wait()
}
