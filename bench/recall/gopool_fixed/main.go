// go-redis internal/pool: ConnPool.Get took p.connsMu and, on the
// "pool exhausted" path, returned ErrPoolTimeout without unlocking. The next
// Get/Put from any goroutine blocked on the mutex forever. Modeled here on a
// generic pool type. FIXED TWIN: unlocks on every return path.
package main

import (
	"errors"
	"fmt"
	"sync"
)

// Conn is anything the pool can hand out.
type Conn interface {
	Close() error
}

var (
	ErrClosed        = errors.New("redis: client is closed")
	ErrPoolExhausted = errors.New("redis: connection pool exhausted")
)

// Pool is a bounded pool of connections of type C.
type Pool[C Conn] struct {
	mu     sync.Mutex
	idle   []C
	size   int
	max    int
	closed bool
	dial   func() (C, error)
}

func NewPool[C Conn](max int, dial func() (C, error)) *Pool[C] {
	return &Pool[C]{max: max, dial: dial}
}

func (p *Pool[C]) Get() (C, error) {
	var zero C
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return zero, ErrClosed
	}
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return c, nil
	}
	if p.size >= p.max {
		p.mu.Unlock()
		return zero, ErrPoolExhausted
	}
	p.size++
	p.mu.Unlock()

	c, err := p.dial()
	if err != nil {
		p.mu.Lock()
		p.size--
		p.mu.Unlock()
		return zero, err
	}
	return c, nil
}

func (p *Pool[C]) Put(c C) {
	p.mu.Lock()
	p.idle = append(p.idle, c)
	p.mu.Unlock()
}

type tcpConn struct{ id int }

func (c *tcpConn) Close() error { return nil }

func main() {
	var next int
	var dialMu sync.Mutex
	pool := NewPool(2, func() (*tcpConn, error) {
		dialMu.Lock()
		defer dialMu.Unlock()
		next++
		return &tcpConn{id: next}, nil
	})

	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				cn, err := pool.Get()
				if err != nil {
					continue // exhausted: retry
				}
				pool.Put(cn)
			}
		}()
	}
	wg.Wait()
	fmt.Println("dialed", next)
}
