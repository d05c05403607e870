package main

import "sync"

// A feed publishes under its lock; the reader gets the channel through
// an accessor and, per update, releases connections whose release
// callback (made by the feed) takes the feed's lock.
type Feed interface {
	Start()
	Release() func()
	Updates() <-chan int
}

type ring struct {
	mu      sync.Mutex
	updates chan int
	n       int
}

func (r *ring) Start() {
	r.updates = make(chan int)
	go func() {
		for i := 0; i < 10; i++ {
			r.publish(i)
		}
	}()
}

func (r *ring) publish(i int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.updates <- i
}

func (r *ring) Release() func() { return func() { r.drop() } }

func (r *ring) drop() {
	r.mu.Lock()
	r.n--
	r.mu.Unlock()
}

func (r *ring) Updates() <-chan int { return r.updates }

type conn struct {
	mu      sync.Mutex
	release func()
}

func (c *conn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.release != nil {
		c.release()
	}
}

type client struct {
	feed  Feed
	conns []*conn
}

func (cl *client) watch() {
	for range cl.feed.Updates() {
		for _, c := range cl.conns {
			c.close()
		}
	}
}

func main() {
	cl := &client{feed: &ring{}}
	cl.conns = append(cl.conns, &conn{release: cl.feed.Release()}, &conn{release: cl.feed.Release()})
	cl.feed.Start()
	go cl.watch()
	select {}
}
