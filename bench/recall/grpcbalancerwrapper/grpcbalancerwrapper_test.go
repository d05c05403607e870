// Project: grpc-go (google.golang.org/grpc), ClientConn <-> ccBalancerWrapper.
// Bug: approximate (balancer-v2 rollout era, ~v1.10-v1.12): ClientConn.handleResolvedAddrs held
// cc.mu while pushing the new addresses into the balancer wrapper (ccb.balancerMu), while the
// subconn-state path held ccb.balancerMu and the balancer called ccb.NewSubConn -> cc.newAddrConn
// (cc.mu): an AB-BA inversion between the resolver goroutine and the transport-monitor goroutine.
// Fix: ClientConn records its state under cc.mu and calls into the balancer wrapper after unlocking.
package grpcbalancerwrapper

import (
	"errors"
	"sync"
	"testing"
	"time"
)

type Address struct{ Addr string }

type ConnectivityState int

const (
	Idle ConnectivityState = iota
	Connecting
	Ready
	TransientFailure
)

type SubConn interface {
	UpdateAddresses([]Address)
	Connect()
}

// BalancerClientConn is the ClientConn as seen by a balancer (balancer.ClientConn).
type BalancerClientConn interface {
	NewSubConn([]Address) (SubConn, error)
	UpdateBalancerState(ConnectivityState)
}

type Balancer interface {
	HandleResolvedAddrs([]Address, error)
	HandleSubConnStateChange(SubConn, ConnectivityState)
}

type addrConn struct {
	cc    *ClientConn
	mu    sync.Mutex
	addrs []Address
	state ConnectivityState
}

func (ac *addrConn) connect() {
	ac.mu.Lock()
	ac.state = Connecting
	ac.mu.Unlock()
}

func (ac *addrConn) tryUpdateAddrs(addrs []Address) {
	ac.mu.Lock()
	ac.addrs = addrs
	ac.mu.Unlock()
}

type acBalancerWrapper struct{ ac *addrConn }

func (acbw *acBalancerWrapper) UpdateAddresses(a []Address) { acbw.ac.tryUpdateAddrs(a) }
func (acbw *acBalancerWrapper) Connect()                    { acbw.ac.connect() }

type ClientConn struct {
	target          string
	mu              sync.Mutex
	conns           map[*addrConn]struct{}
	curAddresses    []Address
	balancerWrapper *ccBalancerWrapper
}

func (cc *ClientConn) newAddrConn(addrs []Address) (*addrConn, error) {
	ac := &addrConn{cc: cc, addrs: addrs}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.conns == nil {
		return nil, errors.New("grpc: the client connection is closing")
	}
	cc.conns[ac] = struct{}{}
	return ac, nil
}

// handleResolvedAddrs is called from the resolver wrapper's goroutine.
func (cc *ClientConn) handleResolvedAddrs(addrs []Address, err error) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.conns == nil {
		return
	}
	cc.curAddresses = addrs
	time.Sleep(50 * time.Millisecond) // widen the window
	cc.balancerWrapper.handleResolvedAddrs(addrs, err)
}

type ccBalancerWrapper struct {
	cc         *ClientConn
	balancerMu sync.Mutex // serializes calls into the balancer
	balancer   Balancer
	mu         sync.Mutex
	subConns   map[*acBalancerWrapper]struct{}
	state      ConnectivityState
}

func (ccb *ccBalancerWrapper) handleResolvedAddrs(addrs []Address, err error) {
	ccb.balancerMu.Lock()
	defer ccb.balancerMu.Unlock()
	ccb.balancer.HandleResolvedAddrs(addrs, err)
}

// handleSubConnStateChange is called from an addrConn's transport monitor goroutine.
func (ccb *ccBalancerWrapper) handleSubConnStateChange(sc SubConn, s ConnectivityState) {
	ccb.balancerMu.Lock()
	defer ccb.balancerMu.Unlock()
	ccb.balancer.HandleSubConnStateChange(sc, s)
}

func (ccb *ccBalancerWrapper) NewSubConn(addrs []Address) (SubConn, error) {
	ac, err := ccb.cc.newAddrConn(addrs)
	if err != nil {
		return nil, err
	}
	acbw := &acBalancerWrapper{ac: ac}
	ccb.mu.Lock()
	ccb.subConns[acbw] = struct{}{}
	ccb.mu.Unlock()
	return acbw, nil
}

func (ccb *ccBalancerWrapper) UpdateBalancerState(s ConnectivityState) {
	ccb.mu.Lock()
	ccb.state = s
	ccb.mu.Unlock()
}

type pickfirstBalancer struct {
	cc    BalancerClientConn
	sc    SubConn
	addrs []Address
}

func (b *pickfirstBalancer) HandleResolvedAddrs(addrs []Address, err error) {
	if err != nil {
		return
	}
	b.addrs = addrs
	b.sc.UpdateAddresses(addrs)
}

func (b *pickfirstBalancer) HandleSubConnStateChange(sc SubConn, s ConnectivityState) {
	if sc != b.sc {
		return
	}
	if s == TransientFailure { // replace the broken subconn
		nsc, err := b.cc.NewSubConn(b.addrs)
		if err != nil {
			return
		}
		b.sc = nsc
		nsc.Connect()
		s = Connecting
	}
	b.cc.UpdateBalancerState(s)
}

func TestBalancerDeadlock(t *testing.T) {
	cc := &ClientConn{target: "dns:///foo", conns: map[*addrConn]struct{}{}}
	ccb := &ccBalancerWrapper{cc: cc, subConns: map[*acBalancerWrapper]struct{}{}}
	cc.balancerWrapper = ccb
	pf := &pickfirstBalancer{cc: ccb, addrs: []Address{{"a:443"}}}
	ccb.balancer = pf
	sc, err := ccb.NewSubConn(pf.addrs)
	if err != nil {
		t.Fatal(err)
	}
	pf.sc = sc

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // resolver goroutine
		defer wg.Done()
		cc.handleResolvedAddrs([]Address{{"a:443"}, {"b:443"}}, nil)
	}()
	go func() { // transport monitor goroutine
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		ccb.handleSubConnStateChange(sc, TransientFailure)
	}()
	wg.Wait()
}
