package cyclegroups

import "sync"

// One call made under a lock, into code that takes three other locks,
// each of which another function holds while it takes the first: three
// cycles, and three more through two of them, one place to fix
// (grpc-go's updateResolverState holding cc.mu while switching
// balancers). One finding, at the call.
type Conn struct {
	mu    sync.Mutex
	bal   *Balancer
	conns int
}

type Balancer struct {
	closeMu, subMu, stateMu sync.Mutex
	conn                    *Conn
}

func (c *Conn) remove() {
	c.mu.Lock()
	c.conns--
	c.mu.Unlock()
}

func (b *Balancer) close() {
	b.closeMu.Lock()
	b.subMu.Lock()
	b.stateMu.Lock()
	b.stateMu.Unlock()
	b.subMu.Unlock()
	b.closeMu.Unlock()
}

func (b *Balancer) removeSub() {
	b.closeMu.Lock()
	b.conn.remove()
	b.closeMu.Unlock()
	b.subMu.Lock()
	b.conn.remove()
	b.subMu.Unlock()
	b.stateMu.Lock()
	b.conn.remove()
	b.stateMu.Unlock()
}

func (c *Conn) switchBalancer() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bal.close() // want `lock order inversion: .* but Conn.mu then Balancer.closeMu in Conn.switchBalancer .*; this acquisition closes 6 lock-order cycles`
}
