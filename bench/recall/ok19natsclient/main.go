// Modelled on nats-server's client connection teardown (server/client.go):
// the server registers close hooks that run under the client's mutex with the
// client passed in. Each hook reads only immutable fields or atomic counters
// of the client, never its mutex-guarded state, so none of them relock c.mu.

package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

type client struct {
	cid     uint64 // immutable after creation
	name    string // immutable after creation
	account string // immutable after creation

	inMsgs  atomic.Int64
	outMsgs atomic.Int64

	mu     sync.Mutex
	subs   map[string]int
	closed bool
}

type closeHook func(c *client)

type server struct {
	hooks []closeHook // set up before any client connects

	connsMu sync.Mutex
	conns   map[uint64]*client

	closedConns   atomic.Int64
	droppedMsgs   atomic.Int64
	accountCloses map[string]*atomic.Int64 // keys fixed at startup
}

func newServer(accounts []string) *server {
	s := &server{conns: make(map[uint64]*client), accountCloses: make(map[string]*atomic.Int64)}
	for _, a := range accounts {
		s.accountCloses[a] = new(atomic.Int64)
	}
	s.hooks = append(s.hooks,
		func(c *client) { s.closedConns.Add(1) },
		func(c *client) {
			if d := c.inMsgs.Load() - c.outMsgs.Load(); d > 0 {
				s.droppedMsgs.Add(d)
			}
		},
		func(c *client) {
			if ctr, ok := s.accountCloses[c.account]; ok {
				ctr.Add(1)
			}
		},
	)
	return s
}

func (s *server) accept(cid uint64, account string) *client {
	c := &client{cid: cid, name: fmt.Sprintf("conn-%d", cid), account: account, subs: make(map[string]int)}
	s.connsMu.Lock()
	s.conns[cid] = c
	s.connsMu.Unlock()
	return c
}

func (c *client) processSub(subject string) {
	c.mu.Lock()
	if !c.closed {
		c.subs[subject]++
	}
	c.mu.Unlock()
}

func (c *client) deliver(n int) {
	c.inMsgs.Add(int64(n))
	c.outMsgs.Add(int64(n - n/4))
}

func (s *server) closeConnection(c *client) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	clear(c.subs)
	for _, h := range s.hooks {
		h(c)
	}
	c.mu.Unlock()

	s.connsMu.Lock()
	delete(s.conns, c.cid)
	s.connsMu.Unlock()
}

func main() {
	accounts := []string{"$G", "SYS", "TENANT_A"}
	s := newServer(accounts)
	var wg sync.WaitGroup
	for i := uint64(1); i <= 12; i++ {
		c := s.accept(i, accounts[i%3])
		wg.Add(2)
		go func() {
			defer wg.Done()
			for j := 0; j < 40; j++ {
				c.processSub(fmt.Sprintf("orders.%d", j%5))
				c.deliver(j % 9)
			}
			s.closeConnection(c)
		}()
		go func() {
			defer wg.Done()
			// A slow-consumer check may race to close the same connection.
			c.deliver(3)
			s.closeConnection(c)
		}()
	}
	wg.Wait()

	s.connsMu.Lock()
	open := len(s.conns)
	s.connsMu.Unlock()
	fmt.Printf("closed=%d open=%d dropped>=%d\n", s.closedConns.Load(), open, s.droppedMsgs.Load())
	for _, a := range accounts {
		fmt.Printf("  account %s: %d closes\n", a, s.accountCloses[a].Load())
	}
	if s.closedConns.Load() != 12 || open != 0 {
		panic("connection accounting broken")
	}
}
