// Package balancer is a trimmed-down client connection modeled on
// grpc-go's balancer API.
package balancer

import "sync"

// Balancer is told about sub-connection state changes.
type Balancer interface {
	UpdateSubConnState(addr string, ready bool)
}

// ClientConn owns sub-connections and the active balancer.
type ClientConn struct {
	mu   sync.Mutex
	subs map[string]bool
	bal  Balancer
}

// NewClientConn returns an empty ClientConn.
func NewClientConn() *ClientConn { return &ClientConn{subs: make(map[string]bool)} }

// SetBalancer installs b.
func (cc *ClientConn) SetBalancer(b Balancer) {
	cc.mu.Lock()
	cc.bal = b
	cc.mu.Unlock()
}

// NewSubConn creates a sub-connection for addr.
func (cc *ClientConn) NewSubConn(addr string) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.subs[addr] = false
}

// MarkReady reports addr as ready to the balancer while holding cc.mu.
func (cc *ClientConn) MarkReady(addr string) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.subs[addr] = true
	if cc.bal != nil {
		cc.bal.UpdateSubConnState(addr, true)
	}
}
