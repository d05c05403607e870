// Command b70dgraphpoolstring reproduces a self-deadlock through an
// implicit String method, modelled on Dgraph's connection pools
// (conn/pools.go, Pools and Pool with its embedded sync.RWMutex), no
// specific upstream bug.
//
// Pool embeds a sync.RWMutex that guards the connection, the last echo
// time and the dial error. Pool.String, used whenever a pool is logged,
// read-locks the pool to print its health. When the heartbeat fails,
// monitorHealth calls reconnect, which takes the pool's write lock to swap
// the connection and, still under that lock, logs a warning through
// warningf with the pool itself as a %s argument. log.Printf formats the
// argument, fmt calls Pool.String, and String's RLock cannot be granted
// while the same goroutine holds the write lock.
//
// The fix makes String print only the immutable address, without locking.
package main

import (
	"errors"
	"fmt"
	"log"
	"os"
	"sync"
	"time"
)

const echoDuration = 500 * time.Millisecond

type clientConn struct {
	target string
	gen    int
	broken bool
}

func (c *clientConn) Echo() error {
	if c.broken {
		return errors.New("rpc error: code = Unavailable desc = transport is closing")
	}
	return nil
}

func (c *clientConn) Close() error { return nil }

type Pool struct {
	sync.RWMutex
	conn     *clientConn
	lastEcho time.Time
	Addr     string
	dialErr  error
	dials    int
}

var logger = log.New(os.Stderr, "", log.Lmicroseconds)

func warningf(format string, args ...interface{}) {
	logger.Printf("W "+format, args...)
}

func (p *Pool) String() string {
	p.RLock()
	defer p.RUnlock()
	return fmt.Sprintf("Pool{addr: %s, healthy: %v, dialErr: %v}",
		p.Addr, p.isHealthyLocked(), p.dialErr)
}

func (p *Pool) isHealthyLocked() bool {
	return p.conn != nil && time.Since(p.lastEcho) < 4*echoDuration
}

func (p *Pool) IsHealthy() bool {
	p.RLock()
	defer p.RUnlock()
	return p.isHealthyLocked()
}

func (p *Pool) dial() (*clientConn, error) {
	p.dials++
	return &clientConn{target: p.Addr, gen: p.dials}, nil
}

func (p *Pool) heartbeat() error {
	p.RLock()
	conn := p.conn
	p.RUnlock()
	if err := conn.Echo(); err != nil {
		return err
	}
	p.Lock()
	p.lastEcho = time.Now()
	p.Unlock()
	return nil
}

func (p *Pool) reconnect(cause error) {
	p.Lock()
	defer p.Unlock()
	warningf("CONN: Re-connecting to %s after %v", p, cause)
	if p.conn != nil {
		_ = p.conn.Close()
	}
	conn, err := p.dial()
	p.conn, p.dialErr = conn, err
}

func (p *Pool) monitorHealth(rounds int) {
	for i := 0; i < rounds; i++ {
		if err := p.heartbeat(); err != nil {
			p.reconnect(err)
		}
	}
}

type Pools struct {
	sync.RWMutex
	all map[string]*Pool
}

func (ps *Pools) Connect(addr string) *Pool {
	ps.Lock()
	defer ps.Unlock()
	if p, ok := ps.all[addr]; ok {
		return p
	}
	p := &Pool{Addr: addr}
	p.conn, p.dialErr = p.dial()
	p.lastEcho = time.Now()
	ps.all[addr] = p
	return p
}

func (ps *Pools) Get(addr string) (*Pool, error) {
	ps.RLock()
	defer ps.RUnlock()
	p, ok := ps.all[addr]
	if !ok {
		return nil, fmt.Errorf("no connection pool for %s", addr)
	}
	return p, nil
}

func main() {
	pools := &Pools{all: map[string]*Pool{}}
	for _, addr := range []string{"alpha1:7080", "alpha2:7080", "zero1:5080"} {
		pools.Connect(addr)
	}
	p, err := pools.Get("alpha2:7080")
	if err != nil {
		fmt.Println(err)
		return
	}
	p.monitorHealth(2)
	p.conn.broken = true
	p.monitorHealth(1)
	fmt.Printf("alpha2 healthy=%v dials=%d\n", p.IsHealthy(), p.dials)
}
