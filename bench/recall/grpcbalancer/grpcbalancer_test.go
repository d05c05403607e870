// Project: grpc-go (clientconn.go, balancer_conn_wrappers.go, pickfirst.go).
//
// Bug (approximate; grpc-go ~v1.1x): lock-order inversion between addrConn.mu and
// acBalancerWrapper.mu, closed through the balancer.Balancer interface.
//   - addrConn.updateConnectivityState ran with ac.mu held and delivered the new
//     state to the balancer inline (cc.handleSubConnStateChange ->
//     ccBalancerWrapper.updateSubConnState -> Balancer.UpdateSubConnState);
//     pick_first reacts to IDLE with sc.Connect(), which takes acbw.mu.
//   - a resolver update goes Balancer.UpdateClientConnState -> sc.UpdateAddresses,
//     which holds acbw.mu and calls ac.tryUpdateAddrs, which takes ac.mu.
//
// Fix: deliver SubConn state updates to the balancer after releasing ac.mu (grpc
// later moved them onto the balancer wrapper's own serializer goroutine).
package grpcbalancer

import (
	"sync"
	"testing"
	"time"
)

// ---- connectivity / resolver / balancer API ----

type State int

const (
	Idle State = iota
	Connecting
	Ready
	TransientFailure
	Shutdown
)

type Address struct{ Addr string }

type SubConnState struct{ ConnectivityState State }

type ClientConnState struct{ Addresses []Address }

type SubConn interface {
	UpdateAddresses([]Address)
	Connect()
}

type Balancer interface {
	UpdateClientConnState(ClientConnState) error
	UpdateSubConnState(SubConn, SubConnState)
}

// ---- pick_first ----

type pickfirstBalancer struct {
	sc SubConn
}

func (b *pickfirstBalancer) UpdateClientConnState(s ClientConnState) error {
	b.sc.UpdateAddresses(s.Addresses)
	return nil
}

func (b *pickfirstBalancer) UpdateSubConnState(sc SubConn, s SubConnState) {
	if s.ConnectivityState == Idle {
		sc.Connect()
	}
}

// ---- ClientConn internals ----

type ClientConn struct {
	balancerWrapper *ccBalancerWrapper
}

func (cc *ClientConn) handleSubConnStateChange(sc SubConn, s State) {
	cc.balancerWrapper.updateSubConnState(sc, s)
}

type ccBalancerWrapper struct {
	balancer Balancer
}

func (ccb *ccBalancerWrapper) updateSubConnState(sc SubConn, s State) {
	ccb.balancer.UpdateSubConnState(sc, SubConnState{ConnectivityState: s})
}

func (ccb *ccBalancerWrapper) updateClientConnState(s ClientConnState) error {
	return ccb.balancer.UpdateClientConnState(s)
}

type acBalancerWrapper struct {
	mu sync.Mutex
	ac *addrConn
}

func (acbw *acBalancerWrapper) UpdateAddresses(addrs []Address) {
	acbw.mu.Lock()
	defer acbw.mu.Unlock()
	channelzTraceEvent("SubConn addresses updated")
	acbw.ac.tryUpdateAddrs(addrs)
}

func (acbw *acBalancerWrapper) Connect() {
	acbw.mu.Lock() // DEADLOCK HERE (transport goroutine holds ac.mu, wants acbw.mu)
	defer acbw.mu.Unlock()
	go acbw.ac.connect()
}

type transport struct{}

func (transport) Close() { time.Sleep(20 * time.Millisecond) } // flush + close the HTTP/2 conn

type addrConn struct {
	cc   *ClientConn
	acbw SubConn

	mu        sync.Mutex
	addrs     []Address
	curAddr   Address
	state     State
	transport *transport
}

// updateConnectivityState requires ac.mu to be held.
func (ac *addrConn) updateConnectivityState(s State) {
	if ac.state == s {
		return
	}
	ac.state = s
	ac.cc.handleSubConnStateChange(ac.acbw, s)
}

func (ac *addrConn) tryUpdateAddrs(addrs []Address) bool {
	ac.mu.Lock() // DEADLOCK HERE (resolver goroutine holds acbw.mu, wants ac.mu)
	defer ac.mu.Unlock()
	for _, a := range addrs {
		if a == ac.curAddr {
			ac.addrs = addrs
			return true
		}
	}
	return false
}

// onGoAway handles a GOAWAY from the server: the transport is torn down and
// the SubConn goes back to IDLE.
func (ac *addrConn) onGoAway() {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	if ac.transport != nil {
		ac.transport.Close()
		ac.transport = nil
	}
	ac.updateConnectivityState(Idle)
}

func (ac *addrConn) connect() {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	if ac.state != Idle {
		return
	}
	ac.transport = &transport{}
	ac.updateConnectivityState(Connecting)
}

func channelzTraceEvent(string) { time.Sleep(20 * time.Millisecond) }

func TestGoAwayRacesWithResolverUpdate(t *testing.T) {
	cc := &ClientConn{}
	ac := &addrConn{cc: cc, addrs: []Address{{"10.0.0.1:443"}}, curAddr: Address{"10.0.0.1:443"},
		state: Ready, transport: &transport{}}
	acbw := &acBalancerWrapper{ac: ac}
	ac.acbw = acbw
	pf := &pickfirstBalancer{sc: acbw}
	cc.balancerWrapper = &ccBalancerWrapper{balancer: pf}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // http2Client reader goroutine: GOAWAY received
		defer wg.Done()
		ac.onGoAway()
	}()
	go func() { // resolver: DNS re-resolution pushes a new address list
		defer wg.Done()
		_ = cc.balancerWrapper.updateClientConnState(ClientConnState{
			Addresses: []Address{{"10.0.0.1:443"}, {"10.0.0.2:443"}},
		})
	}()
	wg.Wait()
}
