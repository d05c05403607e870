package branches

import "sync"

// A handler that switches on the type of the event it is passed takes the
// case its caller's event picks: `h.Handle(&ConnEnd{})` runs the ConnEnd
// case only (kubelet's DRA plugin reconnecting from gRPC's teardown).

type ConnStats interface{ isStats() }

type ConnBegin struct{}
type ConnEnd struct{}

func (*ConnBegin) isStats() {}
func (*ConnEnd) isStats()   {}

type plugin struct {
	mu        sync.Mutex
	connected bool
}

func (p *plugin) reconnect() {
	p.mu.Lock()
	p.connected = true
	p.mu.Unlock()
}

func (p *plugin) HandleConn(stats ConnStats) {
	switch stats.(type) {
	case *ConnBegin:
		p.connected = true
	case *ConnEnd:
		p.reconnect()
	}
}

// tearDown reports the end under the lock the reconnect takes.
func (p *plugin) tearDown() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.HandleConn(&ConnEnd{}) // want `plugin.mu locked again by plugin.HandleConn -> plugin.reconnect \(at eventtype.go:\d+\) while held since eventtype.go:\d+: self-deadlock \[double-lock\]`
}

// begin reports the start under it: that case takes nothing. Silent.
func (p *plugin) begin() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.HandleConn(&ConnBegin{})
}

// handleAny passes on what it is given: either case. Silent.
func (p *plugin) handleAny(s ConnStats) {
	p.HandleConn(s)
}
