package callbackonce

import "sync"

// Conn loads its config once, under its own lock, through sync.Once:
// the function runs now, on this goroutine.
type Conn struct {
	mu   sync.Mutex
	once sync.Once
	cfg  *Config
	n    int
}

type Config struct {
	mu   sync.Mutex
	conn *Conn
	v    int
}

func (c *Conn) setup() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.once.Do(func() {
		c.cfg.mu.Lock()
		c.n = c.cfg.v
		c.cfg.mu.Unlock()
	})
}

func (g *Config) reload() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.conn.mu.Lock() // want `lock order inversion: Conn.mu then Config.mu in Conn.setup \(once.go:21 -> once.go:23 via sync.Once.Do -> Conn.setup.func1\) but Config.mu then Conn.mu in Config.reload \(once.go:31 -> once.go:33\) \[lock-order\]`
	g.v = g.conn.n
	g.conn.mu.Unlock()
}

// Correct: the once function runs before the lock is taken.
type Peer struct {
	mu   sync.Mutex
	once sync.Once
	opts *Options
	n    int
}

type Options struct {
	mu   sync.Mutex
	peer *Peer
	v    int
}

func (p *Peer) setup() {
	p.once.Do(func() {
		p.opts.mu.Lock()
		p.n = p.opts.v
		p.opts.mu.Unlock()
	})
	p.mu.Lock()
	p.n++
	p.mu.Unlock()
}

func (o *Options) reload() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.peer.mu.Lock()
	o.v = o.peer.n
	o.peer.mu.Unlock()
}
