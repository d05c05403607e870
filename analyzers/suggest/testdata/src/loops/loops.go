// Package loops: a goroutine's loop owns the fields most of whose writes
// it makes; the other goroutines' accesses are the deviant sites.
package loops

import (
	"context"
	"sync"
	"time"
)

type Server struct {
	requests chan int
	pending  int          // want `Server.pending: add //confined:control \(rank \d of \d\): 1 of 2 accesses \(1 of 1 writes\) run on Server.loop's goroutine only; 1 deviant: s.pending read in Server.Pending \(whose callers are unknown\) \(loops.go:\d+\)`
	seen     map[int]bool // want `Server.seen: add //confined:control \(rank \d of \d\): 1 of 2 accesses \(1 of 1 writes\) run on Server.loop's goroutine only; 1 deviant: s.seen read in Server.expire.func1 \(on the goroutine started by time.AfterFunc\)`
	// total is the loop's alone: nothing to find, nothing suggested.
	total int
	// shared is written as often elsewhere: no owner.
	shared int
	// st's fields belong to another type: not the loop's to own.
	st *stats
	// locked is written under mu: guarded, not owned, though Locked reads
	// it without the lock.
	mu     sync.Mutex
	locked int
}

type stats struct{ served int }

func NewServer() *Server {
	s := &Server{requests: make(chan int), seen: map[int]bool{}, st: &stats{}}
	go s.loop()
	return s
}

func (s *Server) loop() { // want `Server.loop: add //confined:entry \(rank \d of \d\): its loop receives from s.requests and its goroutine owns Server.pending, Server.seen`
	for r := range s.requests {
		s.pending++
		s.seen[r] = true
		s.total += r
		s.shared++
		s.expire(time.Second)
		s.st.served++
		s.mu.Lock()
		s.locked++
		s.mu.Unlock()
	}
}

func (s *Server) Pending() int { return s.pending }

func (s *Server) Bump() { s.shared++ }

func (s *Server) Served() int { return s.st.served }

func (s *Server) Locked() int { return s.locked }

func (s *Server) expire(d time.Duration) {
	time.AfterFunc(d, func() { _ = len(s.seen) })
}

// Once runs no loop: no entry, however it is started.
type Once struct{ done bool }

func (o *Once) run() { o.done = true }

func (o *Once) Done() bool { return o.done }

func StartOnce() *Once {
	o := &Once{}
	go o.run()
	return o
}

// Ticker loops on a timer and a context only: no mailbox, no entry.
type Ticker struct{ n int }

func (t *Ticker) run(ctx context.Context) {
	tk := time.NewTicker(time.Second)
	for {
		select {
		case <-tk.C:
			t.n++
		case <-ctx.Done():
			return
		}
	}
}

func (t *Ticker) N() int { return t.n }

func StartTicker(ctx context.Context) *Ticker {
	t := &Ticker{}
	go t.run(ctx)
	return t
}
