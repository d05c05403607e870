// Project: gRPC-go (clientconn.go / resolver_conn_wrapper.go)
// Bug: ClientConn.Close holds cc.mu while closing the resolver wrapper, and
//
//	ccResolverWrapper.close takes ccr.incomingMu. Concurrently the name
//	resolver's watcher goroutine pushes an update: ccr.UpdateState holds
//	ccr.incomingMu and calls cc.updateResolverState, which takes cc.mu.
//	Lock order cc.mu -> incomingMu (Close) vs incomingMu -> cc.mu (update):
//	Close() and the resolver goroutine deadlock (AB-BA).
//
// Upstream fix: not recalled by number; grpc-go snapshots the wrappers under
//
//	cc.mu and closes them after releasing cc.mu.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type Address struct{ Addr string }
type State struct{ Addresses []Address }

// Resolver is the name resolver (e.g. the dns resolver's watcher).
type Resolver interface {
	Close()
}

type dnsResolver struct {
	cc   *ccResolverWrapper
	done chan struct{}
	wg   sync.WaitGroup
}

func (d *dnsResolver) watcher() {
	defer d.wg.Done()
	for i := 0; ; i++ {
		select {
		case <-d.done:
			return
		case <-time.After(time.Millisecond):
		}
		d.cc.UpdateState(State{Addresses: []Address{{Addr: fmt.Sprintf("10.0.0.%d:443", i%250)}}})
	}
}

func (d *dnsResolver) Close() { close(d.done) }

type ccResolverWrapper struct {
	cc         *ClientConn
	resolver   Resolver
	incomingMu sync.Mutex // Synchronizes all the incoming calls.
	closed     bool
}

func (ccr *ccResolverWrapper) UpdateState(s State) error {
	ccr.incomingMu.Lock()
	defer ccr.incomingMu.Unlock()
	if ccr.closed {
		return nil
	}
	time.Sleep(200 * time.Microsecond) // service-config parsing
	return ccr.cc.updateResolverState(s, nil)
}

func (ccr *ccResolverWrapper) close() {
	ccr.incomingMu.Lock() // DEADLOCK HERE
	ccr.closed = true
	ccr.resolver.Close()
	ccr.incomingMu.Unlock()
}

type ClientConn struct {
	target          string
	mu              sync.Mutex
	conns           map[string]bool
	resolverWrapper *ccResolverWrapper
	firstResolveErr error
}

var ErrClientConnClosing = errors.New("grpc: the client connection is closing")

func (cc *ClientConn) updateResolverState(s State, err error) error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.conns == nil {
		return ErrClientConnClosing
	}
	cc.firstResolveErr = err
	for _, a := range s.Addresses {
		cc.conns[a.Addr] = true
	}
	return nil
}

func (cc *ClientConn) Close() error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.conns == nil {
		return ErrClientConnClosing
	}
	conns := cc.conns
	cc.conns = nil
	if cc.resolverWrapper != nil {
		cc.resolverWrapper.close()
	}
	fmt.Println("closing", len(conns), "addrConns")
	return nil
}

func Dial(target string) *ClientConn {
	cc := &ClientConn{target: target, conns: map[string]bool{}}
	ccr := &ccResolverWrapper{cc: cc}
	r := &dnsResolver{cc: ccr, done: make(chan struct{})}
	ccr.resolver = r
	cc.resolverWrapper = ccr
	r.wg.Add(1)
	go r.watcher()
	return cc
}

func main() {
	for i := 0; i < 20; i++ {
		cc := Dial("dns:///backend.svc:443")
		time.Sleep(10 * time.Millisecond)
		cc.Close()
	}
	fmt.Println("all connections closed")
}
