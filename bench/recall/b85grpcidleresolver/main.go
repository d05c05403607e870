// Project: grpc-go (clientconn.go: ClientConn.enterIdleMode, updateResolverState; resolver_conn_wrapper.go: ccResolverWrapper.close, UpdateState; internal/idle), v1.59.0, 2023 (issue #6783, fixed by PR #6804 "client: rework resolver and balancer wrappers to avoid deadlock").
// Bug: when the idle timeout fires, ClientConn.enterIdleMode holds cc.mu while it closes the resolver wrapper, and ccResolverWrapper.close waits for the wrapper's callback serializer to finish. A resolver update that is already running on that serializer calls cc.updateResolverState, which needs cc.mu, so the idleness goroutine, the serializer and the resolver goroutine wait for each other forever.
package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// ---- internal/grpcsync ----

type CallbackSerializer struct {
	Done      chan struct{}
	callbacks chan func(context.Context)
	closedMu  sync.Mutex
	closed    bool
}

func NewCallbackSerializer(ctx context.Context) *CallbackSerializer {
	cs := &CallbackSerializer{Done: make(chan struct{}), callbacks: make(chan func(context.Context), 16)}
	go cs.run(ctx)
	return cs
}

func (cs *CallbackSerializer) Schedule(f func(ctx context.Context)) bool {
	cs.closedMu.Lock()
	defer cs.closedMu.Unlock()
	if cs.closed {
		return false
	}
	cs.callbacks <- f
	return true
}

func (cs *CallbackSerializer) run(ctx context.Context) {
	defer close(cs.Done)
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case cb := <-cs.callbacks:
			cb(ctx)
		}
	}
	cs.closedMu.Lock()
	cs.closed = true
	cs.closedMu.Unlock()
}

// ---- resolver ----

type State struct{ Addresses []string }

type resolverClientConn interface{ UpdateState(State) error }

type Resolver interface {
	ResolveNow()
	Close()
}

// dnsResolver re-resolves in its own goroutine and pushes the result.
type dnsResolver struct {
	cc  resolverClientConn
	rn  chan struct{}
	out chan error
}

func (d *dnsResolver) watcher() {
	for range d.rn {
		d.out <- d.cc.UpdateState(State{Addresses: []string{"10.0.0.7:443", "10.0.0.8:443"}})
	}
}
func (d *dnsResolver) ResolveNow() { d.rn <- struct{}{} }
func (d *dnsResolver) Close()      {}

// ---- grpclog, as installed by the application (ships logs over a slow pipe) ----

type slowLogger struct{ w io.Writer }

func (l slowLogger) Infof(format string, args ...any) {
	time.Sleep(100 * time.Millisecond)
	fmt.Fprintf(l.w, format+"\n", args...)
}

var logger = slowLogger{w: io.Discard}

// ---- resolver_conn_wrapper.go ----

type ccResolverWrapper struct {
	cc               *ClientConn
	serializer       *CallbackSerializer
	serializerCancel context.CancelFunc
	curState         State

	mu       sync.Mutex
	closed   bool
	resolver Resolver
}

func newCCResolverWrapper(cc *ClientConn) *ccResolverWrapper {
	ctx, cancel := context.WithCancel(context.Background())
	ccr := &ccResolverWrapper{cc: cc, serializer: NewCallbackSerializer(ctx), serializerCancel: cancel}
	r := &dnsResolver{cc: ccr, rn: make(chan struct{}), out: make(chan error, 1)}
	go r.watcher()
	ccr.mu.Lock()
	ccr.resolver = r
	ccr.mu.Unlock()
	return ccr
}

func (ccr *ccResolverWrapper) close() {
	ccr.mu.Lock()
	if ccr.closed {
		ccr.mu.Unlock()
		return
	}
	// Close the serializer to ensure that no more calls from the resolver are
	// handled, before actually closing the resolver.
	ccr.serializerCancel()
	ccr.closed = true
	r := ccr.resolver
	ccr.mu.Unlock()

	// Give enqueued callbacks a chance to finish.
	<-ccr.serializer.Done

	go r.Close()
}

// UpdateState is called by the resolver with new addresses.
func (ccr *ccResolverWrapper) UpdateState(s State) error {
	errCh := make(chan error, 1)
	ok := ccr.serializer.Schedule(func(context.Context) {
		logger.Infof("Resolver state updated: %v", s.Addresses)
		ccr.curState = s
		errCh <- ccr.cc.updateResolverState(ccr.curState, nil)
	})
	if !ok {
		return nil
	}
	return <-errCh
}

// ---- clientconn.go ----

type addrConn struct{ addr string }

func (ac *addrConn) tearDown() {}

type ClientConn struct {
	mu              sync.RWMutex
	conns           map[*addrConn]struct{}
	resolverWrapper *ccResolverWrapper
	idle            bool
}

func (cc *ClientConn) updateResolverState(s State, err error) error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.conns == nil {
		return nil
	}
	for _, a := range s.Addresses {
		cc.conns[&addrConn{addr: a}] = struct{}{}
	}
	return nil
}

// enterIdleMode puts the channel in idle mode, shutting down the name
// resolver, the LB policy and all subchannels.
func (cc *ClientConn) enterIdleMode() error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.conns == nil || cc.idle {
		return nil
	}
	conns := cc.conns
	cc.conns = make(map[*addrConn]struct{})
	cc.resolverWrapper.close()
	cc.idle = true
	go func() {
		for ac := range conns {
			ac.tearDown()
		}
	}()
	return nil
}

type idler ClientConn

func (i *idler) EnterIdleMode() error { return (*ClientConn)(i).enterIdleMode() }

// ---- internal/idle ----

type Enforcer interface{ EnterIdleMode() error }

type Manager struct {
	enforcer     Enforcer
	idleMu       sync.Mutex
	actuallyIdle bool
}

func (m *Manager) handleIdleTimeout() {
	m.idleMu.Lock()
	defer m.idleMu.Unlock()
	if err := m.enforcer.EnterIdleMode(); err != nil {
		return
	}
	m.actuallyIdle = true
}

func main() {
	cc := &ClientConn{conns: make(map[*addrConn]struct{})}
	cc.resolverWrapper = newCCResolverWrapper(cc)
	mgr := &Manager{enforcer: (*idler)(cc)}
	r := cc.resolverWrapper.resolver.(*dnsResolver)

	// The DNS resolver's periodic re-resolution delivers new addresses.
	r.ResolveNow()
	time.Sleep(20 * time.Millisecond)
	// No RPC for idle_timeout: the idleness manager's timer fires.
	idleDone := make(chan struct{})
	go func() {
		mgr.handleIdleTimeout()
		close(idleDone)
	}()
	<-idleDone
	fmt.Println("entered idle mode; resolver update:", <-r.out)
}
