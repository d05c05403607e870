package callback

import "sync"

// A callback stored in a field, called under the lock with the object as
// its argument (nats.go's AsyncErrorCB(nc, sub, err) from the read loop):
// when the field only ever holds one function, that function runs there,
// and a callback that asks the connection for its status locks it again.

type ErrHandler func(*Conn, error)

type Options struct {
	AsyncErrorCB ErrHandler
}

type Conn struct {
	mu      sync.Mutex
	Opts    Options
	status  int
	dropped int
}

func (c *Conn) Status() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

func (c *Conn) slowConsumer(err error) {
	if c.Opts.AsyncErrorCB != nil {
		c.Opts.AsyncErrorCB(c, err)
	}
}

func (c *Conn) processMsg(limit int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropped++ // a counter: not the state the callee's branch tests
	if c.dropped > limit {
		c.slowConsumer(nil) // want `Conn.mu locked again by Conn.slowConsumer -> NewConn.func1 -> Conn.Status \(at argfield.go:\d+, on the paths that call Conn.Status\) while held since argfield.go:\d+: self-deadlock \[double-lock\]`
	}
}

func NewConn() *Conn {
	c := &Conn{}
	c.Opts.AsyncErrorCB = func(nc *Conn, err error) { _ = nc.Status() }
	return c
}

// Two functions stored in one field: which one runs is not known (edges
// only). Silent.
type Hub struct {
	mu     sync.Mutex
	notify func(*Hub)
	n      int
}

func (h *Hub) Count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

func (h *Hub) fire() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.notify(h)
}

var hubEvents int

func NewHub(verbose bool) *Hub {
	h := &Hub{}
	h.notify = func(*Hub) { hubEvents++ }
	if verbose {
		h.notify = func(x *Hub) { println(x.Count()) }
	}
	return h
}
