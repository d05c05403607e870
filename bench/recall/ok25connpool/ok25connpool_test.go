// Pattern: connection pool with background health checks. p.lock returns its
// release function (used as defer p.lock()() and as release := p.lock(); the
// locking trimIdle runs only after release()). Get returns on every path with
// p.mu released, including the dial-success path. lockIfOpen is a TryLock-style
// helper that returns holding p.mu only when it reports true.
package ok25connpool

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var ErrClosed, ErrDial = errors.New("pool closed"), errors.New("dial failed")

type Conn struct {
	id      int
	healthy atomic.Bool
}

func (c *Conn) Ping() bool { return c.healthy.Load() }

type Pool struct {
	mu      sync.Mutex
	cond    *sync.Cond
	dial    func(id int) (*Conn, error)
	idle    []*Conn
	open    int
	max     int
	maxIdle int
	nextID  int
	closed  bool
}

func NewPool(max, maxIdle int, dial func(int) (*Conn, error)) *Pool {
	p := &Pool{dial: dial, max: max, maxIdle: maxIdle}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// lock acquires p.mu and returns the function that releases it.
func (p *Pool) lock() func() {
	p.mu.Lock()
	return p.mu.Unlock
}

// lockIfOpen acquires p.mu and reports whether the pool is still open. When it
// returns true the caller holds p.mu and must unlock it; when it returns false
// p.mu has already been released.
func (p *Pool) lockIfOpen() bool {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return false
	}
	return true
}

func (p *Pool) Stats() (open, idle int) {
	defer p.lock()()
	return p.open, len(p.idle)
}

func (p *Pool) Get() (*Conn, error) {
	p.mu.Lock()
	for {
		if p.closed {
			p.mu.Unlock()
			return nil, ErrClosed
		}
		if n := len(p.idle); n > 0 {
			c := p.idle[n-1]
			p.idle = p.idle[:n-1]
			p.mu.Unlock()
			return c, nil
		}
		if p.open < p.max {
			p.open++
			p.nextID++
			id := p.nextID
			p.mu.Unlock()
			c, err := p.dial(id)
			if err != nil {
				p.mu.Lock()
				p.open--
				p.mu.Unlock()
				p.cond.Signal()
				return nil, err
			}
			return c, nil
		}
		p.cond.Wait()
	}
}

func (p *Pool) Put(c *Conn) {
	release := p.lock()
	if p.closed || !c.Ping() {
		p.open--
		release()
		p.cond.Signal()
		return
	}
	p.idle = append(p.idle, c)
	over := len(p.idle) > p.maxIdle
	release()
	p.cond.Signal()
	if over {
		p.trimIdle()
	}
}

func (p *Pool) trimIdle() {
	defer p.lock()()
	for len(p.idle) > p.maxIdle {
		p.idle = p.idle[1:]
		p.open--
	}
	p.cond.Broadcast()
}

// HealthCheck pings idle connections outside the lock and drops bad ones.
func (p *Pool) HealthCheck() int {
	if !p.lockIfOpen() {
		return 0
	}
	batch := p.idle
	p.idle = nil
	p.mu.Unlock()

	var good []*Conn
	for _, c := range batch {
		if c.Ping() {
			good = append(good, c)
		}
	}
	release := p.lock()
	p.open -= len(batch) - len(good)
	if p.closed {
		p.open -= len(good)
		release()
		return len(batch)
	}
	p.idle = append(p.idle, good...)
	release()
	p.cond.Broadcast()
	return len(batch) - len(good)
}

func (p *Pool) Close() {
	release := p.lock()
	p.closed, p.open, p.idle = true, p.open-len(p.idle), nil
	release()
	p.cond.Broadcast()
}

func TestPoolWithHealthChecks(t *testing.T) {
	const max = 4
	var inUse atomic.Int32
	pool := NewPool(max, 2, func(id int) (*Conn, error) {
		if id%7 == 0 {
			return nil, ErrDial
		}
		c := &Conn{id: id}
		c.healthy.Store(true)
		return c, nil
	})

	stop := make(chan struct{})
	checkerDone := make(chan struct{})
	go func() {
		defer close(checkerDone)
		tick := time.NewTicker(100 * time.Microsecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				pool.HealthCheck()
			}
		}
	}()

	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 150; i++ {
				c, err := pool.Get()
				if err != nil {
					continue
				}
				if n := inUse.Add(1); n > max {
					t.Errorf("in-use %d exceeds max %d", n, max)
				}
				if (i+w)%11 == 0 {
					c.healthy.Store(false)
				}
				inUse.Add(-1)
				pool.Put(c)
			}
		}(w)
	}
	wg.Wait()
	close(stop)
	<-checkerDone

	open, idle := pool.Stats()
	if open != idle || open > max {
		t.Fatalf("open=%d idle=%d after quiesce", open, idle)
	}
	pool.Close()
	if _, err := pool.Get(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
}
