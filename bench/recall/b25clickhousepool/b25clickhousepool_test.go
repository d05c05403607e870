// Project: ClickHouse/clickhouse-go (v2)
// Bug: idlePool.Get held p.mu while closing idle connections that had exceeded ConnMaxLifetime; nativeTransport.close() on *connect fires the onClose hook installed by clickhouse.dial, which updates pool stats through idle.Len() and locks p.mu again.
// Fix: Get only pops expired connections under p.mu and closes them after the lock is released.
package b25clickhousepool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

var ErrAcquireConnTimeout = errors.New("clickhouse: acquire conn timeout")

type Protocol int

const (
	Native Protocol = iota
	HTTP
)

type Options struct {
	Protocol        Protocol
	Addr            []string
	MaxOpenConns    int
	MaxIdleConns    int
	ConnMaxLifetime time.Duration
	Debugf          func(format string, v ...any)
}

type nativeTransport interface {
	connID() int
	connectedAtTime() time.Time
	isBad() bool
	close() error
}

type connect struct {
	id          int
	addr        string
	connectedAt time.Time
	closed      bool
	onClose     []func(*connect)
	debugf      func(format string, v ...any)
}

func (c *connect) connID() int                { return c.id }
func (c *connect) connectedAtTime() time.Time { return c.connectedAt }
func (c *connect) isBad() bool                { return c.closed }
func (c *connect) close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	c.debugf("[close] conn %d to %s", c.id, c.addr)
	for _, fn := range c.onClose {
		fn(c)
	}
	return nil
}

type httpConnect struct {
	id          int
	url         string
	connectedAt time.Time
}

func (h *httpConnect) connID() int                { return h.id }
func (h *httpConnect) connectedAtTime() time.Time { return h.connectedAt }
func (h *httpConnect) isBad() bool                { return false }
func (h *httpConnect) close() error               { return nil }

type idlePool struct {
	mu          sync.Mutex
	conns       []nativeTransport
	maxLifetime time.Duration
	capacity    int
}

func newIdlePool(lifetime time.Duration, capacity int) *idlePool {
	return &idlePool{maxLifetime: lifetime, capacity: capacity}
}

func (p *idlePool) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

func (p *idlePool) Put(c nativeTransport) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.conns) >= p.capacity {
		go c.close()
		return
	}
	p.conns = append(p.conns, c)
}

func (p *idlePool) Get(ctx context.Context) (nativeTransport, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.conns) > 0 {
		c := p.conns[len(p.conns)-1]
		p.conns = p.conns[:len(p.conns)-1]
		if c.isBad() || time.Since(c.connectedAtTime()) >= p.maxLifetime {
			c.close()
			continue
		}
		return c, nil
	}
	return nil, ctx.Err()
}

type Stats struct {
	MaxOpenConns int
	Idle         int
	Closed       int
}

type clickhouse struct {
	opt     *Options
	idle    *idlePool
	open    chan struct{}
	connID  int
	statsMu sync.Mutex
	stats   Stats
}

func Open(opt *Options) *clickhouse {
	return &clickhouse{
		opt:  opt,
		idle: newIdlePool(opt.ConnMaxLifetime, opt.MaxIdleConns),
		open: make(chan struct{}, opt.MaxOpenConns),
	}
}

func (ch *clickhouse) dial(ctx context.Context) (nativeTransport, error) {
	ch.connID++
	if ch.opt.Protocol == HTTP {
		return &httpConnect{id: ch.connID, url: "http://" + ch.opt.Addr[0], connectedAt: time.Now()}, nil
	}
	c := &connect{id: ch.connID, addr: ch.opt.Addr[0], connectedAt: time.Now(), debugf: ch.opt.Debugf}
	c.onClose = append(c.onClose, func(*connect) {
		idle := ch.idle.Len()
		ch.statsMu.Lock()
		ch.stats.Idle = idle
		ch.stats.Closed++
		ch.statsMu.Unlock()
	})
	return c, nil
}

func (ch *clickhouse) acquire(ctx context.Context) (nativeTransport, error) {
	select {
	case ch.open <- struct{}{}:
	case <-ctx.Done():
		return nil, ErrAcquireConnTimeout
	}
	if conn, err := ch.idle.Get(ctx); conn != nil && err == nil {
		return conn, nil
	}
	return ch.dial(ctx)
}

func (ch *clickhouse) release(conn nativeTransport) {
	<-ch.open
	ch.idle.Put(conn)
}

func TestProbe(t *testing.T) {
	var logs []string
	ch := Open(&Options{
		Protocol:        Native,
		Addr:            []string{"127.0.0.1:9000"},
		MaxOpenConns:    4,
		MaxIdleConns:    2,
		ConnMaxLifetime: 20 * time.Millisecond,
		Debugf:          func(format string, v ...any) { logs = append(logs, fmt.Sprintf(format, v...)) },
	})
	ctx := context.Background()
	conn, err := ch.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ch.release(conn)
	time.Sleep(30 * time.Millisecond)
	conn2, err := ch.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if conn2.connID() == conn.connID() {
		t.Fatal("expired connection reused")
	}
	ch.release(conn2)
}
