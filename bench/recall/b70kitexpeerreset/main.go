// Command b70kitexpeerreset reproduces a self-deadlock modelled on
// CloudWeGo Kitex's long-connection pool (pkg/remote/connpool/long_pool.go,
// LongPool and its per-address peer), no specific upstream bug.
//
// peer.reset(lock bool) drops the idle connections of one address and
// starts a new generation; its boolean parameter says whether reset must
// take p.mu itself. Close calls reset(false) because it already holds
// p.mu. When service discovery removes an instance, LongPool.Clean closes
// its peer; when the instance comes back, the next RPC reaches peer.Get,
// which holds p.mu, sees the peer is closed and revives it with
// reset(true). reset then locks p.mu a second time on the same goroutine
// and the call path (client.Call, remoteClient.getConn, LongPool.Get,
// peer.Get, peer.reset) hangs.
//
// The fix passes false, since Get already holds p.mu.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type longConn struct {
	id       int
	addr     string
	deadline time.Time
	closed   bool
}

func (c *longConn) Close() error { c.closed = true; return nil }

type Dialer interface {
	DialTimeout(network, address string, timeout time.Duration) (*longConn, error)
}

type fakeDialer struct{ dials int }

func (d *fakeDialer) DialTimeout(network, address string, timeout time.Duration) (*longConn, error) {
	d.dials++
	return &longConn{id: d.dials, addr: address}, nil
}

type peer struct {
	mu             sync.Mutex
	addr           string
	idle           []*longConn
	maxIdle        int
	maxIdleTimeout time.Duration
	closed         bool
	generation     int
}

func (p *peer) reset(lock bool) {
	if lock {
		p.mu.Lock()
		defer p.mu.Unlock()
	}
	for _, c := range p.idle {
		_ = c.Close()
	}
	p.idle = p.idle[:0]
	p.closed = false
	p.generation++
}

func (p *peer) Get(ctx context.Context, d Dialer, timeout time.Duration) (*longConn, error) {
	p.mu.Lock()
	if p.closed {
		p.reset(true)
	}
	now := time.Now()
	for len(p.idle) > 0 {
		c := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if now.Before(c.deadline) {
			p.mu.Unlock()
			return c, nil
		}
		_ = c.Close()
	}
	p.mu.Unlock()
	return d.DialTimeout("tcp", p.addr, timeout)
}

func (p *peer) Put(c *longConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.idle) >= p.maxIdle {
		_ = c.Close()
		return
	}
	c.deadline = time.Now().Add(p.maxIdleTimeout)
	p.idle = append(p.idle, c)
}

func (p *peer) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reset(false)
	p.closed = true
}

type LongPool struct {
	mu    sync.Mutex
	peers map[string]*peer
}

func (lp *LongPool) getPeer(addr string) *peer {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	p, ok := lp.peers[addr]
	if !ok {
		p = &peer{addr: addr, maxIdle: 8, maxIdleTimeout: 30 * time.Second}
		lp.peers[addr] = p
	}
	return p
}

func (lp *LongPool) Get(ctx context.Context, addr string, d Dialer, timeout time.Duration) (*longConn, error) {
	return lp.getPeer(addr).Get(ctx, d, timeout)
}

func (lp *LongPool) Put(c *longConn) { lp.getPeer(c.addr).Put(c) }

// Clean is called by the resolver when an instance disappears.
func (lp *LongPool) Clean(addr string) { lp.getPeer(addr).Close() }

type remoteClient struct {
	pool   *LongPool
	dialer Dialer
}

func (rc *remoteClient) getConn(ctx context.Context, addr string) (*longConn, error) {
	return rc.pool.Get(ctx, addr, rc.dialer, 50*time.Millisecond)
}

type client struct {
	rc      *remoteClient
	targets []string
}

func (c *client) Call(ctx context.Context, method string) error {
	conn, err := c.rc.getConn(ctx, c.targets[0])
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	fmt.Printf("%s via conn #%d to %s\n", method, conn.id, conn.addr)
	c.rc.pool.Put(conn)
	return nil
}

func main() {
	pool := &LongPool{peers: map[string]*peer{}}
	cli := &client{rc: &remoteClient{pool: pool, dialer: &fakeDialer{}},
		targets: []string{"10.0.3.17:8888"}}
	ctx := context.Background()
	_ = cli.Call(ctx, "EchoService.Echo")
	_ = cli.Call(ctx, "EchoService.Echo")

	pool.Clean("10.0.3.17:8888")
	if err := cli.Call(ctx, "EchoService.Echo"); err != nil {
		fmt.Println("call:", err)
	}
	fmt.Println("generation:", pool.getPeer("10.0.3.17:8888").generation)
}
