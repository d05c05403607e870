// Project: jackc/pgx v3 (conn_pool.go)
// Bug: ConnPool.Acquire locked p.cond.L (the pool's sync.Locker) and only
//      unlocked it on the success path. When acquire() gave up with
//      ErrAcquireTimeout the error was returned with the lock still held, so
//      the next Release (or Acquire/Stat/Close) blocks forever on p.cond.L.Lock.
// Fix: Acquire releases the lock with defer p.cond.L.Unlock() on every path.

package b18pgxpool

import (
	"errors"
	"sync"
	"testing"
	"time"
)

var (
	ErrAcquireTimeout = errors.New("timeout acquiring connection from pool")
	ErrClosedPool     = errors.New("cannot acquire from closed pool")
)

type ConnConfig struct {
	Host     string
	Port     uint16
	Database string
	User     string
}

type Conn struct {
	pid     uint32
	alive   bool
	poolRst int
	config  ConnConfig
}

type ConnPoolConfig struct {
	ConnConfig
	MaxConnections int
	AcquireTimeout time.Duration
	Dial           func(ConnConfig) (*Conn, error)
}

type ConnPoolStat struct {
	MaxConnections       int
	CurrentConnections   int
	AvailableConnections int
}

type ConnPool struct {
	allConnections       []*Conn
	availableConnections []*Conn
	cond                 *sync.Cond
	config               ConnConfig
	closed               bool
	maxConnections       int
	resetCount           int
	acquireTimeout       time.Duration
	dial                 func(ConnConfig) (*Conn, error)
}

func NewConnPool(config ConnPoolConfig) *ConnPool {
	return &ConnPool{
		cond:           sync.NewCond(&sync.Mutex{}),
		config:         config.ConnConfig,
		maxConnections: config.MaxConnections,
		acquireTimeout: config.AcquireTimeout,
		dial:           config.Dial,
	}
}

// Acquire takes exclusive use of a connection until it is released.
func (p *ConnPool) Acquire() (*Conn, error) {
	p.cond.L.Lock()
	var deadline *time.Time
	if p.acquireTimeout > 0 {
		d := time.Now().Add(p.acquireTimeout)
		deadline = &d
	}
	c, err := p.acquire(deadline)
	if err != nil {
		return nil, err
	}
	p.cond.L.Unlock()
	return c, nil
}

// acquire performs acquision assuming pool is already locked
func (p *ConnPool) acquire(deadline *time.Time) (*Conn, error) {
	if p.closed {
		return nil, ErrClosedPool
	}
	if n := len(p.availableConnections); n > 0 {
		c := p.availableConnections[n-1]
		p.availableConnections = p.availableConnections[:n-1]
		return c, nil
	}
	if len(p.allConnections) < p.maxConnections {
		return p.createConnectionUnlocked()
	}

	// All connections are in use; wake the waiter when the deadline passes.
	if deadline != nil {
		timer := time.AfterFunc(time.Until(*deadline), func() {
			p.cond.L.Lock()
			p.cond.Broadcast()
			p.cond.L.Unlock()
		})
		defer timer.Stop()
	}
	for len(p.availableConnections) == 0 {
		if deadline != nil && !time.Now().Before(*deadline) {
			return nil, ErrAcquireTimeout
		}
		p.cond.Wait()
	}
	n := len(p.availableConnections)
	c := p.availableConnections[n-1]
	p.availableConnections = p.availableConnections[:n-1]
	return c, nil
}

// createConnectionUnlocked releases the pool lock while dialing.
func (p *ConnPool) createConnectionUnlocked() (*Conn, error) {
	placeholder := &Conn{}
	p.allConnections = append(p.allConnections, placeholder)
	p.cond.L.Unlock()
	c, err := p.dial(p.config)
	p.cond.L.Lock()
	p.allConnections[len(p.allConnections)-1] = c
	if err != nil {
		p.allConnections = p.allConnections[:len(p.allConnections)-1]
		return nil, err
	}
	return c, nil
}

// Release gives up use of a connection.
func (p *ConnPool) Release(conn *Conn) {
	p.cond.L.Lock()
	defer p.cond.L.Unlock()
	if conn.poolRst != p.resetCount || !conn.alive {
		return
	}
	p.availableConnections = append(p.availableConnections, conn)
	p.cond.Signal()
}

func (p *ConnPool) Stat() ConnPoolStat {
	p.cond.L.Lock()
	defer p.cond.L.Unlock()
	return ConnPoolStat{MaxConnections: p.maxConnections, CurrentConnections: len(p.allConnections),
		AvailableConnections: len(p.availableConnections)}
}

func TestAcquireTimeoutThenRelease(t *testing.T) {
	pid := uint32(4000)
	pool := NewConnPool(ConnPoolConfig{
		ConnConfig:     ConnConfig{Host: "localhost", Port: 5432, Database: "app", User: "app"},
		MaxConnections: 1,
		AcquireTimeout: 20 * time.Millisecond,
		Dial: func(cc ConnConfig) (*Conn, error) {
			pid++
			return &Conn{pid: pid, alive: true, config: cc}, nil
		},
	})

	held, err := pool.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // long-running report query
		defer wg.Done()
		time.Sleep(60 * time.Millisecond)
		pool.Release(held)
	}()
	go func() { // request handler with a short acquire timeout
		defer wg.Done()
		if _, err := pool.Acquire(); err != ErrAcquireTimeout {
			t.Errorf("expected timeout, got %v", err)
		}
	}()
	wg.Wait()
	if s := pool.Stat(); s.AvailableConnections != 1 {
		t.Fatalf("stat %+v", s)
	}
}
