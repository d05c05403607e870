// Project: grpc-go (clientconn.go, resolver_conn_wrapper.go, internal/resolver/dns/dns_resolver.go)
// Bug: ClientConn.Close held cc.mu while closing the ccResolverWrapper. Closing the
// DNS resolver waits (WaitGroup) for its watcher goroutine, but that goroutine may be
// inside ccResolverWrapper.UpdateState -> cc.updateResolverState, which needs cc.mu.
// Close never returns and the watcher never gets cc.mu.
// Upstream fix: Close snapshots and nils cc.resolverWrapper under cc.mu, releases cc.mu,
// and only then closes the resolver wrapper (later reworked around a callback
// serializer). Exact PR number not recalled; shape modelled faithfully.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

var errConnClosing = errors.New("grpc: the client connection is closing")

type State struct{ Addresses []string }

// ClientConn is what the resolver sees (resolver.ClientConn).
type ClientConn interface {
	UpdateState(State) error
}

type Resolver interface {
	ResolveNow()
	Close()
}

type dnsResolver struct {
	host string
	cc   ClientConn
	rn   chan struct{}
	done chan struct{}
	wg   sync.WaitGroup
}

func newDNSResolver(host string, cc ClientConn) *dnsResolver {
	d := &dnsResolver{host: host, cc: cc, rn: make(chan struct{}, 1), done: make(chan struct{})}
	d.wg.Add(1)
	go d.watcher()
	return d
}

func (d *dnsResolver) lookup() []string {
	time.Sleep(20 * time.Millisecond) // simulated network round trip
	return []string{"10.0.0.1:443", "10.0.0.2:443"}
}

func (d *dnsResolver) watcher() {
	defer d.wg.Done()
	for {
		select {
		case <-d.done:
			return
		case <-d.rn:
		}
		addrs := d.lookup()
		if err := d.cc.UpdateState(State{Addresses: addrs}); err != nil {
			fmt.Println("dns: update state:", err)
		}
	}
}

func (d *dnsResolver) ResolveNow() {
	select {
	case d.rn <- struct{}{}:
	default:
	}
}

func (d *dnsResolver) Close() {
	close(d.done)
	d.wg.Wait()
}

// ccResolverWrapper adapts the resolver callbacks onto the ClientConn.
type ccResolverWrapper struct {
	cc       *clientConn
	resolver Resolver
}

func (ccr *ccResolverWrapper) UpdateState(s State) error {
	return ccr.cc.updateResolverState(s)
}

func (ccr *ccResolverWrapper) close() { ccr.resolver.Close() }

type clientConn struct {
	target          string
	mu              sync.Mutex
	closed          bool
	addrs           map[string]bool
	resolverWrapper *ccResolverWrapper
}

func dial(target string) *clientConn {
	cc := &clientConn{target: target, addrs: map[string]bool{}}
	ccr := &ccResolverWrapper{cc: cc}
	ccr.resolver = newDNSResolver(target, ccr)
	cc.resolverWrapper = ccr
	ccr.resolver.ResolveNow()
	return cc
}

func (cc *clientConn) updateResolverState(s State) error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.closed {
		return errConnClosing
	}
	for _, a := range s.Addresses {
		cc.addrs[a] = true
	}
	return nil
}

func (cc *clientConn) Close() error {
	cc.mu.Lock()
	if cc.closed {
		cc.mu.Unlock()
		return errConnClosing
	}
	cc.closed = true
	rWrapper := cc.resolverWrapper
	cc.resolverWrapper = nil
	cc.addrs = nil
	cc.mu.Unlock()

	// Close the resolver without holding cc.mu: its watcher may be blocked
	// in updateResolverState, which will now see cc.closed and return.
	if rWrapper != nil {
		rWrapper.close()
	}
	return nil
}

func main() {
	cc := dial("dns:///example.com:443")
	time.Sleep(5 * time.Millisecond) // watcher is now inside lookup()
	if err := cc.Close(); err != nil {
		fmt.Println("close:", err)
	}
	fmt.Println("closed", cc.target)
}
