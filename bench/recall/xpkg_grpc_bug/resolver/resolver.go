// Package resolver is a manual name resolver modeled on grpc-go's
// resolver/manual package.
package resolver

import "sync"

// ClientConn receives resolved addresses (grpc's resolver.ClientConn); it is
// implemented by the higher-level client package.
type ClientConn interface {
	UpdateState(addrs []string)
}

// Manual is a resolver whose addresses are pushed by hand. CC must be set
// before ResolveNow is called.
type Manual struct {
	Target string
	CC     ClientConn

	mu     sync.RWMutex
	addrs  []string
	closed bool
}

// SetAddrs replaces the address list.
func (r *Manual) SetAddrs(addrs []string) {
	r.mu.Lock()
	r.addrs = addrs
	r.mu.Unlock()
}

// ResolveNow pushes the current addresses to CC under the read lock.
func (r *Manual) ResolveNow() {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return
	}
	r.CC.UpdateState(append([]string(nil), r.addrs...))
}

// Close stops the resolver.
func (r *Manual) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
}
