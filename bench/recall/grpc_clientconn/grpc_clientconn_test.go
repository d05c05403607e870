// Project: grpc-go (clientconn.go).
// Bug (approximate, from memory): lock-order inversion between
// ClientConn.mu and addrConn.mu. ClientConn.removeAddrConn() held cc.mu
// while calling ac.tearDown(), which takes ac.mu; meanwhile the addrConn's
// resetTransport goroutine holds ac.mu and reports the state change via
// ac.updateConnectivityState -> cc.handleSubConnStateChange, which takes
// cc.mu. grpc-go fixed this (1.1x era, exact PR not remembered) by
// releasing cc.mu in removeAddrConn before calling ac.tearDown.
package grpc_clientconn

import (
	"errors"
	"sync"
	"testing"
	"time"
)

type State int

const (
	Idle State = iota
	Connecting
	Ready
	TransientFailure
	Shutdown
)

var errConnDrain = errors.New("grpc: the connection is drained")

// balancer.SubConn / balancer.Balancer, trimmed.
type SubConn interface {
	Connect()
}

type Balancer interface {
	UpdateSubConnState(sc SubConn, s State)
}

type pickfirstBalancer struct {
	state State
}

func (b *pickfirstBalancer) UpdateSubConnState(sc SubConn, s State) {
	b.state = s
}

// ccBalancerWrapper sits between the ClientConn and the Balancer.
type ccBalancerWrapper struct {
	cc       *ClientConn
	balancer Balancer
}

func (ccb *ccBalancerWrapper) handleSubConnStateChange(sc SubConn, s State) {
	ccb.balancer.UpdateSubConnState(sc, s)
}

type acBalancerWrapper struct {
	mu sync.Mutex
	ac *addrConn
}

func (acbw *acBalancerWrapper) Connect() {}

type ClientConn struct {
	target string

	mu              sync.RWMutex
	conns           map[*addrConn]struct{}
	balancerWrapper *ccBalancerWrapper
}

type addrConn struct {
	cc   *ClientConn
	addr string

	mu    sync.Mutex
	acbw  SubConn
	state State
	// connecting is closed when resetTransport has taken ac.mu; test hook.
	connecting chan struct{}
}

func newClientConn(target string) *ClientConn {
	cc := &ClientConn{target: target, conns: make(map[*addrConn]struct{})}
	cc.balancerWrapper = &ccBalancerWrapper{cc: cc, balancer: &pickfirstBalancer{}}
	return cc
}

func (cc *ClientConn) newAddrConn(addr string) *addrConn {
	ac := &addrConn{cc: cc, addr: addr, connecting: make(chan struct{})}
	ac.acbw = &acBalancerWrapper{ac: ac}
	cc.mu.Lock()
	cc.conns[ac] = struct{}{}
	cc.mu.Unlock()
	return ac
}

// handleSubConnStateChange is called by addrConns when their state changes.
func (cc *ClientConn) handleSubConnStateChange(sc SubConn, s State) {
	cc.mu.Lock() // DEADLOCK HERE
	defer cc.mu.Unlock()
	if cc.conns == nil {
		return
	}
	cc.balancerWrapper.handleSubConnStateChange(sc, s)
}

// removeAddrConn removes the addrConn in the subConn from clientConn.
// It also tears down the ac with the given error.
func (cc *ClientConn) removeAddrConn(ac *addrConn, err error) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.conns == nil {
		return
	}
	delete(cc.conns, ac)
	<-ac.connecting // (test) the transport goroutine is mid-reset
	ac.tearDown(err)
}

// updateConnectivityState must be called with ac.mu held.
func (ac *addrConn) updateConnectivityState(s State) {
	if ac.state == s {
		return
	}
	ac.state = s
	ac.cc.handleSubConnStateChange(ac.acbw, s)
}

func (ac *addrConn) resetTransport() {
	ac.mu.Lock()
	if ac.state == Shutdown {
		ac.mu.Unlock()
		return
	}
	close(ac.connecting)
	time.Sleep(50 * time.Millisecond) // dialing
	ac.updateConnectivityState(Connecting)
	ac.mu.Unlock()
}

// tearDown starts to tear down the addrConn.
func (ac *addrConn) tearDown(err error) {
	ac.mu.Lock() // DEADLOCK HERE
	defer ac.mu.Unlock()
	if ac.state == Shutdown {
		return
	}
	ac.updateConnectivityStateShutdown()
}

func (ac *addrConn) updateConnectivityStateShutdown() {
	ac.state = Shutdown
}

func TestRemoveAddrConnDuringReset(t *testing.T) {
	cc := newClientConn("passthrough:///localhost:50051")
	ac := cc.newAddrConn("localhost:50051")

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		ac.resetTransport()
	}()
	go func() {
		defer wg.Done()
		cc.removeAddrConn(ac, errConnDrain)
	}()
	wg.Wait()
}
