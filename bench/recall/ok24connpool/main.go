// Pattern: a connection pool that uses a lock helper returning the unlock
// function (`unlock := p.lock(); ...; unlock()` and `defer p.lock()()`),
// always releasing before calling other locking methods; a package logger is
// called under the pool lock with *Conn operands whose String() reads only
// immutable fields and an atomic counter.
package main

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

type Logger interface {
	Infof(format string, args ...any)
}

type memLogger struct {
	mu    sync.Mutex
	lines []string
}

func (l *memLogger) Infof(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	l.mu.Lock()
	l.lines = append(l.lines, s)
	l.mu.Unlock()
}

type Conn struct {
	id   int
	addr string
	uses atomic.Int64
}

func (c *Conn) String() string {
	return fmt.Sprintf("conn#%d(%s, uses=%d)", c.id, c.addr, c.uses.Load())
}

var ErrExhausted = errors.New("pool exhausted")

type Pool struct {
	mu     sync.Mutex
	addr   string
	max    int
	nextID int
	idle   []*Conn
	active int
	log    Logger
}

func NewPool(addr string, max int, log Logger) *Pool {
	return &Pool{addr: addr, max: max, log: log}
}

func (p *Pool) lock() func() {
	p.mu.Lock()
	return p.mu.Unlock
}

func (p *Pool) Stats() (idle, active int) {
	defer p.lock()()
	return len(p.idle), p.active
}

func (p *Pool) Get() (*Conn, error) {
	unlock := p.lock()
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.active++
		p.log.Infof("reuse %v", c)
		unlock()
		c.uses.Add(1)
		return c, nil
	}
	if p.active >= p.max {
		p.log.Infof("exhausted active=%d max=%d", p.active, p.max)
		unlock()
		return nil, ErrExhausted
	}
	p.nextID++
	c := &Conn{id: p.nextID, addr: p.addr}
	p.active++
	p.log.Infof("dial %v", c)
	unlock()
	c.uses.Add(1)
	return c, nil
}

func (p *Pool) Put(c *Conn) {
	unlock := p.lock()
	p.active--
	p.idle = append(p.idle, c)
	p.log.Infof("release %s", c)
	unlock()

	// Stats locks again; the helper's release above already ran.
	if idle, _ := p.Stats(); idle > p.max {
		panic("idle overflow")
	}
}

func main() {
	log := &memLogger{}
	pool := NewPool("db:5432", 4, log)

	var wg sync.WaitGroup
	var ok, busy atomic.Int64
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				c, err := pool.Get()
				if err != nil {
					busy.Add(1)
					continue
				}
				ok.Add(1)
				pool.Put(c)
			}
		}()
	}
	wg.Wait()

	idle, active := pool.Stats()
	if active != 0 {
		fmt.Println("leaked connections:", active)
		os.Exit(1)
	}
	log.mu.Lock()
	n := len(log.lines)
	log.mu.Unlock()
	fmt.Printf("idle=%d ok=%d busy=%d logs=%d\n", idle, ok.Load(), busy.Load(), n)
}
