// Project: grpc/grpc-go v1.71.0 (internal/resolver/delegatingresolver/delegatingresolver.go).
// Issue #8168, fixed by PR #8195 "delegatingresolver: Stop calls into delegates
// once the parent resolver is closed" (which absorbed PR #8199 "Call ResolveNow
// in a new goroutine to avoid deadlocks"), released in v1.71.1.
//
// With an HTTPS proxy configured, the delegating resolver wraps two child
// resolvers, each given a wrappingClientConn whose stateListener func field is
// updateProxyResolverState or updateTargetResolverState. Both listeners lock
// r.mu; the proxy listener takes it at line 94 and, when the parent
// ClientConn rejects the combined state, asks the *other* child to re-resolve
// by calling r.targetResolver.ResolveNow() through the resolver.Resolver
// interface while still holding r.mu. A target resolver that answers ResolveNow
// synchronously calls wcc.UpdateState, i.e. updateTargetResolverState, which
// locks r.mu again (line 112) on the same goroutine: the DNS watcher of
// the proxy resolver hangs and the channel never leaves CONNECTING. The fix
// calls ResolveNow from a new goroutine, serialized by a separate childMu.
package main

import (
	"errors"
	"fmt"
	"net/url"
	"sync"
)

type Address struct{ Addr, ConnectAddr string } // ConnectAddr: proxyattributes

type Endpoint struct{ Addresses []Address }

type State struct{ Endpoints []Endpoint }

type ResolveNowOptions struct{}

type ClientConn interface {
	UpdateState(State) error
	ReportError(error)
}

type Resolver interface {
	ResolveNow(ResolveNowOptions)
	Close()
}

var ErrBadResolverState = errors.New("bad resolver state")

type delegatingResolver struct {
	target         string
	cc             ClientConn
	proxyURL       *url.URL
	targetResolver Resolver
	proxyResolver  Resolver

	mu                  sync.Mutex // protects all the fields below
	targetResolverState *State
	proxyAddrs          []Address
}

func New(target string, cc ClientConn, proxyURL *url.URL, buildTarget, buildDNS func(host string, cc ClientConn) Resolver) Resolver {
	r := &delegatingResolver{target: target, cc: cc, proxyURL: proxyURL}
	r.targetResolver = buildTarget(target, &wrappingClientConn{stateListener: r.updateTargetResolverState, parent: r})
	r.proxyResolver = buildDNS(proxyURL.Host, &wrappingClientConn{stateListener: r.updateProxyResolverState, parent: r})
	return r
}

func (r *delegatingResolver) ResolveNow(o ResolveNowOptions) {
	r.targetResolver.ResolveNow(o)
	r.proxyResolver.ResolveNow(o)
}

func (r *delegatingResolver) Close() {
	r.targetResolver.Close()
	r.proxyResolver.Close()
}

func (r *delegatingResolver) updateClientConnStateLocked() error {
	if r.targetResolverState == nil || r.proxyAddrs == nil {
		return nil
	}
	var endpoints []Endpoint
	for _, endpt := range r.targetResolverState.Endpoints {
		var addrs []Address
		for _, targetAddr := range endpt.Addresses {
			for _, proxyAddr := range r.proxyAddrs {
				addrs = append(addrs, Address{Addr: proxyAddr.Addr, ConnectAddr: targetAddr.Addr})
			}
		}
		endpoints = append(endpoints, Endpoint{Addresses: addrs})
	}
	return r.cc.UpdateState(State{Endpoints: endpoints})
}

// updateProxyResolverState is the StateListener of the proxy resolver.
func (r *delegatingResolver) updateProxyResolverState(state State) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.proxyAddrs = []Address{}
	for _, endpoint := range state.Endpoints {
		r.proxyAddrs = append(r.proxyAddrs, endpoint.Addresses...)
	}
	err := r.updateClientConnStateLocked()
	// Another possible approach was to block until updates are received from
	// both resolvers. But this is not used because calling `New()` triggers
	// `Build()` for the first resolver, which calls `UpdateState()`.
	if err != nil {
		r.targetResolver.ResolveNow(ResolveNowOptions{})
	}
	return err
}

// updateTargetResolverState is the StateListener of the target resolver.
func (r *delegatingResolver) updateTargetResolverState(state State) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.targetResolverState = &state
	err := r.updateClientConnStateLocked()
	if err != nil {
		r.proxyResolver.ResolveNow(ResolveNowOptions{})
	}
	return nil
}

// wrappingClientConn serves as an intermediary between the parent ClientConn
// and the child resolvers created here.
type wrappingClientConn struct {
	stateListener func(state State) error
	parent        *delegatingResolver
}

func (wcc *wrappingClientConn) UpdateState(state State) error { return wcc.stateListener(state) }
func (wcc *wrappingClientConn) ReportError(err error)         { wcc.parent.cc.ReportError(err) }

// staticResolver: an application resolver that re-pushes its backends synchronously.
type staticResolver struct {
	cc    ClientConn
	state State
}

func (s *staticResolver) ResolveNow(ResolveNowOptions) { _ = s.cc.UpdateState(s.state) }
func (s *staticResolver) Close()                       {}

// dnsResolver watches a host name from its own goroutine.
type dnsResolver struct {
	host   string
	cc     ClientConn
	rn     chan struct{}
	done   chan struct{}
	lookup func(host string) []string
}

func (d *dnsResolver) watcher() {
	for {
		var eps []Endpoint
		for _, a := range d.lookup(d.host) {
			eps = append(eps, Endpoint{Addresses: []Address{{Addr: a}}})
		}
		_ = d.cc.UpdateState(State{Endpoints: eps})
		select {
		case <-d.done:
			return
		case <-d.rn:
		}
	}
}

func (d *dnsResolver) ResolveNow(ResolveNowOptions) {
	select {
	case d.rn <- struct{}{}:
	default:
	}
}

func (d *dnsResolver) Close() { close(d.done) }

// ccResolverWrapper forwards to the channel; pick_first rejects empty states.
type ccResolverWrapper struct {
	mu    sync.Mutex
	ready chan State
}

func (cc *ccResolverWrapper) UpdateState(s State) error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for _, ep := range s.Endpoints {
		if len(ep.Addresses) > 0 {
			cc.ready <- s // buffered; only the first good state is awaited
			return nil
		}
	}
	return ErrBadResolverState
}

func (cc *ccResolverWrapper) ReportError(err error) { fmt.Println("resolver error:", err) }

func main() {
	cc := &ccResolverWrapper{ready: make(chan State, 1)}
	proxyURL, _ := url.Parse("https://proxy.corp.example:3128")
	lookups := 0
	r := New("xds:///payments", cc, proxyURL,
		func(host string, wcc ClientConn) Resolver {
			s := &staticResolver{cc: wcc, state: State{Endpoints: []Endpoint{{Addresses: []Address{{Addr: "10.1.0.7:443"}}}}}}
			_ = wcc.UpdateState(s.state)
			return s
		},
		func(host string, wcc ClientConn) Resolver {
			d := &dnsResolver{host: host, cc: wcc, rn: make(chan struct{}, 1), done: make(chan struct{}),
				lookup: func(string) []string {
					if lookups++; lookups == 1 {
						return nil // transient empty answer for the proxy
					}
					return []string{"192.0.2.10:3128"}
				}}
			go d.watcher()
			return d
		})
	s := <-cc.ready
	fmt.Println("ok, channel got", s.Endpoints[0].Addresses)
	r.Close()
}
