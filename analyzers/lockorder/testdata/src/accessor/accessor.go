// Package accessor: a channel handed out by an accessor method, and a
// callback made by a factory method, are followed back through the
// calls' returns: the wait below is the one the reader's goroutine must
// end, and the reader's callback takes the sender's lock.
package accessor

import "sync"

// Feed is implemented by Ring alone.
type Feed interface {
	Start()
	Release() func()
	Updates() <-chan int
}

type Ring struct {
	mu      sync.Mutex
	updates chan int
	n       int
}

func (r *Ring) Start() {
	r.updates = make(chan int)
	go func() {
		for i := 0; i < 10; i++ {
			r.publish(i)
		}
	}()
}

// publish sends under the lock the reader's callback takes: the reader
// is stuck in the callback while publish waits for it to read.
func (r *Ring) publish(i int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.updates <- i // want `Ring.mu \(taken at accessor.go:\d+\) is held across a channel send; the goroutine started by the go statement, which would unblock it, also takes Ring.mu \[blocking-held\]`
}

func (r *Ring) Release() func() {
	return func() { r.drop() }
}

func (r *Ring) drop() {
	r.mu.Lock()
	r.n--
	r.mu.Unlock()
}

func (r *Ring) Updates() <-chan int { return r.updates }

type Conn struct {
	mu      sync.Mutex
	release func()
}

func (c *Conn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.release != nil {
		c.release()
	}
}

type Client struct {
	feed  Feed
	conns []*Conn
}

func NewClient() *Client {
	cl := &Client{feed: &Ring{}}
	cl.conns = append(cl.conns, &Conn{release: cl.feed.Release()})
	return cl
}

func (cl *Client) watch() {
	for range cl.feed.Updates() {
		for _, c := range cl.conns {
			c.close()
		}
	}
}

func Run() {
	cl := NewClient()
	cl.feed.Start()
	go cl.watch()
}

// Log's reader takes no lock of the log: its wait ends. Silent.
type Log struct {
	mu    sync.Mutex
	lines chan string
	count int
}

func (l *Log) Lines() <-chan string { return l.lines }

func (l *Log) Write(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.count++
	l.lines <- s
}

func Tail(l *Log) {
	go func() {
		for s := range l.Lines() {
			_ = s
		}
	}()
	l.Write("x")
}
