package main

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// conn is a fake upstream connection whose writes must be serialized.
type conn struct {
	id     int
	mu     sync.Mutex
	sent   int
	broken bool
}

func (c *conn) writeLocked(msg string) error {
	if c.broken {
		return errors.New("broken pipe")
	}
	c.sent += len(msg)
	return nil
}

// Pool hands out connections round-robin.
type Pool struct {
	conns []*conn
	rr    atomic.Uint64
}

func NewPool(n int) *Pool {
	p := &Pool{}
	for i := 0; i < n; i++ {
		p.conns = append(p.conns, &conn{id: i, broken: i == 1})
	}
	return p
}

func (p *Pool) next() *conn {
	i := p.rr.Add(1)
	return p.conns[int(i%uint64(len(p.conns)))]
}

// Send writes msg on the next connection. On failure it releases that
// connection's lock before picking and locking another one, so at most one
// conn.mu is ever held by a goroutine (even if next returns the same conn).
func (p *Pool) Send(msg string) (int, error) {
	var lastErr error
	for attempt := 0; attempt < len(p.conns); attempt++ {
		c := p.next()
		c.mu.Lock()
		err := c.writeLocked(msg)
		c.mu.Unlock()
		if err == nil {
			return c.id, nil
		}
		lastErr = err
	}
	return -1, lastErr
}

func (p *Pool) Stats() map[int]int {
	out := map[int]int{}
	for _, c := range p.conns {
		c.mu.Lock()
		out[c.id] = c.sent
		c.mu.Unlock()
	}
	return out
}

func main() {
	p := NewPool(3)
	var wg sync.WaitGroup
	var failures atomic.Int64
	for w := 0; w < 5; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if _, err := p.Send(fmt.Sprintf("w%d-m%d", w, i)); err != nil {
					failures.Add(1)
				}
			}
		}(w)
	}
	wg.Wait()
	st := p.Stats()
	fmt.Println("conn1 sent:", st[1], "failures:", failures.Load(), "total>0:", st[0]+st[2] > 0)
}
