package unpublished

import "sync"

// A new object published on one branch of a test and locked around a
// take on the other branch of the same test is still private there: no
// run of the function does both.
type Gateway struct {
	reloadMu sync.RWMutex
	timers   []*GatewayConn
}

type GatewayConn struct {
	mu       sync.Mutex
	outbound bool
}

func (g *Gateway) watch(c *GatewayConn) { g.timers = append(g.timers, c) }

func (g *Gateway) create(solicit bool) {
	c := &GatewayConn{}
	c.mu.Lock()
	if solicit {
		c.outbound = true
	} else {
		g.watch(c) // published: inbound only
	}
	if solicit {
		g.reloadMu.RLock() // only on the outbound branch, c still private
		g.reloadMu.RUnlock()
	}
	c.mu.Unlock()
}

// The same with the lock taken whatever the branch: c may be published.
func (g *Gateway) accept(inbound bool) {
	c := &GatewayConn{}
	c.mu.Lock()
	if inbound {
		g.watch(c)
	}
	g.reloadMu.RLock()
	g.reloadMu.RUnlock()
	c.mu.Unlock()
}

func (g *Gateway) reload() {
	g.reloadMu.Lock()
	defer g.reloadMu.Unlock()
	for _, c := range g.timers {
		c.mu.Lock() // want `lock order inversion: GatewayConn.mu then Gateway.reloadMu in Gateway.accept \(branch.go:38 -> branch.go:42\) but Gateway.reloadMu then GatewayConn.mu in Gateway.reload \(branch.go:48 -> branch.go:51\) \[lock-order\]`
		c.outbound = false
		c.mu.Unlock()
	}
}
