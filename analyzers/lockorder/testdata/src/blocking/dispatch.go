package blocking

import "sync"

// Callbacks handed to a dispatcher goroutine over a channel are the
// functions sent on it: a callback that needs the lock its sender holds
// keeps the dispatcher from receiving the next one (nats.go's async
// error callbacks, run by one goroutine reading the channel).
type Conn struct {
	mu      sync.Mutex
	async   chan func()
	errs    int
	onError func(*Conn)
}

func NewConn() *Conn {
	c := &Conn{async: make(chan func())}
	go c.dispatch()
	return c
}

func (c *Conn) dispatch() {
	for f := range c.async {
		f()
	}
}

func (c *Conn) countError() {
	c.mu.Lock()
	c.errs++
	c.mu.Unlock()
}

func (c *Conn) slowConsumer() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.async <- c.countError // want `Conn.mu \(taken at dispatch.go:\d+\) is held across a channel send; the goroutine started by the go statement, running the function it was handed \(Conn.countError\), which would unblock it, also takes Conn.mu \[blocking-held\]`
}

// Correct: the callback only reads what it was given, taking no lock.
type Stream struct {
	mu    sync.Mutex
	async chan func()
	last  int
}

func NewStream() *Stream {
	s := &Stream{async: make(chan func())}
	go func() {
		for f := range s.async {
			f()
		}
	}()
	return s
}

func (s *Stream) report(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = n
	s.async <- func() { println(n) }
}
