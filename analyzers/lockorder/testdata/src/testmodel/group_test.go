package testmodel

import (
	"sync"
	"testing"
)

// A hub holds its lock into a helper that takes two parts' locks, while
// each part reports to the hub under its own lock: two cycles closed at
// one call, one fix there, one finding (as in production code).

type hub struct {
	mu sync.Mutex
	a  *part
	b  *meter
}

type part struct {
	mu  sync.Mutex
	hub *hub
}

type meter struct {
	mu  sync.Mutex
	hub *hub
}

func (p *part) report() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hub.mu.Lock()
	p.hub.mu.Unlock()
}

func (m *meter) report() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hub.mu.Lock()
	m.hub.mu.Unlock()
}

func (h *hub) touch() {
	h.a.mu.Lock()
	h.a.mu.Unlock()
	h.b.mu.Lock()
	h.b.mu.Unlock()
}

func (h *hub) sync() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.touch() // want `lock order inversion in test code: .* in hub.sync .*; this acquisition closes 2 lock-order cycles \[lock-order-test\]`
}

func TestSyncWhileReporting(t *testing.T) {
	h := &hub{}
	h.a = &part{hub: h}
	h.b = &meter{hub: h}
	var wg sync.WaitGroup
	wg.Go(h.sync)
	wg.Go(h.a.report)
	wg.Go(h.b.report)
	wg.Wait()
}

// Two functions of the code under test witness the same order (a send
// that registers its call, and a flush); a test that runs both beside
// the other order is reported where production code would be: at the
// first witness, not at whichever the test reaches last.

type rpcConn struct {
	mu      sync.Mutex
	sending sync.Mutex
	seq     int
}

func (c *rpcConn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sending.Lock()
	defer c.sending.Unlock()
}

func (c *rpcConn) send() {
	c.sending.Lock()
	defer c.sending.Unlock()
	c.mu.Lock() // want `lock order inversion in test code: rpcConn.mu then rpcConn.sending in rpcConn.close .* but rpcConn.sending then rpcConn.mu in rpcConn.send .*\[lock-order-test\]`
	c.seq++
	c.mu.Unlock()
}

func (c *rpcConn) flush() {
	c.sending.Lock()
	defer c.sending.Unlock()
	c.mu.Lock()
	c.seq = 0
	c.mu.Unlock()
}

func TestSendWhileClosing(t *testing.T) {
	c := &rpcConn{}
	var wg sync.WaitGroup
	wg.Go(c.send)
	wg.Go(c.flush)
	wg.Go(c.close)
	wg.Wait()
}
