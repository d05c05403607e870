// Project: grpc/grpc-go v1.48.0 (July 2022).
// Files/functions: clientconn.go: ClientConn.newAddrConn, ClientConn.Close;
// balancer_conn_wrappers.go: ccBalancerWrapper.NewSubConn,
// ccBalancerWrapper.UpdateState; pickfirst.go: pickfirstBalancer.UpdateClientConnState;
// internal/channelz/funcs.go: RegisterSubChannel.
// Issue: grpc/grpc-go#5545 "Potential unreleased lock in ClientConn.newAddrConn",
// fixed by grpc/grpc-go#5556 "Switched mutex unlock to defer in newAddrConn" (v1.49).
//
// In v1.48 channelz registration became fallible: RegisterSubChannel returns
// an error when the parent channel has no channelz identifier. newAddrConn
// locks cc.mu to track the new addrConn in cc.conns and registers the
// subchannel while holding it; on that error it returned nil, err without
// unlocking cc.mu. The balancer (pick_first here, through the
// ccBalancerWrapper) sees NewSubConn fail and reports TRANSIENT_FAILURE, but
// the ClientConn mutex stays locked, so the application's later cc.Close()
// blocks forever on cc.mu. The fix takes the lock with defer cc.mu.Unlock().
package main

import (
	"errors"
	"fmt"
	"sync"
)

// --- internal/channelz ---

type Identifier struct {
	typ string
	id  int64
	pid *Identifier
}

var idGen int64

func RegisterSubChannel(pid *Identifier, ref string) (*Identifier, error) {
	if pid == nil {
		return nil, errors.New("a SubChannel's parent id cannot be nil")
	}
	idGen++
	return &Identifier{typ: "SubChannel", id: idGen, pid: pid}, nil
}

// --- resolver / balancer API ---

type Address struct{ Addr string }

type ClientConnState struct{ Addresses []Address }

type State struct{ ConnectivityState string }

type SubConn interface{ Connect() }

type BalancerClientConn interface {
	NewSubConn([]Address) (SubConn, error)
	UpdateState(State)
}

type Balancer interface {
	UpdateClientConnState(ClientConnState) error
}

// --- pickfirst.go ---

type pickfirstBalancer struct {
	cc      BalancerClientConn
	subConn SubConn
}

func (b *pickfirstBalancer) UpdateClientConnState(cs ClientConnState) error {
	if b.subConn == nil {
		sc, err := b.cc.NewSubConn(cs.Addresses)
		if err != nil {
			b.cc.UpdateState(State{ConnectivityState: "TRANSIENT_FAILURE"})
			return fmt.Errorf("pickfirst: failed to create new SubConn: %v", err)
		}
		b.subConn = sc
		sc.Connect()
	}
	return nil
}

// --- balancer_conn_wrappers.go ---

type ccBalancerWrapper struct {
	cc       *ClientConn
	balancer Balancer
}

func (ccb *ccBalancerWrapper) NewSubConn(addrs []Address) (SubConn, error) {
	ac, err := ccb.cc.newAddrConn(addrs)
	if err != nil {
		return nil, err
	}
	return ac, nil
}

func (ccb *ccBalancerWrapper) UpdateState(s State) {
	ccb.cc.csMgr.updateState(s.ConnectivityState)
}

// --- clientconn.go ---

type connectivityStateManager struct {
	mu    sync.Mutex
	state string
}

func (csm *connectivityStateManager) updateState(s string) {
	csm.mu.Lock()
	csm.state = s
	csm.mu.Unlock()
}

type addrConn struct {
	cc         *ClientConn
	addrs      []Address
	channelzID *Identifier
}

func (ac *addrConn) Connect() {}

type ClientConn struct {
	mu         sync.RWMutex
	conns      map[*addrConn]struct{}
	channelzID *Identifier
	csMgr      *connectivityStateManager
	balancer   *ccBalancerWrapper
}

func (cc *ClientConn) newAddrConn(addrs []Address) (*addrConn, error) {
	ac := &addrConn{cc: cc, addrs: addrs}
	// Track ac in cc. This needs to be done before any getTransport(...) is called.
	cc.mu.Lock()
	if cc.conns == nil {
		cc.mu.Unlock()
		return nil, errors.New("grpc: the client connection is closing")
	}

	var err error
	ac.channelzID, err = RegisterSubChannel(cc.channelzID, "")
	if err != nil {
		return nil, err
	}
	cc.conns[ac] = struct{}{}
	cc.mu.Unlock()
	return ac, nil
}

func (cc *ClientConn) Close() error {
	cc.mu.Lock()
	if cc.conns == nil {
		cc.mu.Unlock()
		return errors.New("grpc: the client connection is closing")
	}
	conns := cc.conns
	cc.conns = nil
	cc.mu.Unlock()
	for range conns {
		// ac.tearDown(ErrClientConnClosing)
	}
	return nil
}

// newClientConn builds a channel whose channelz registration did not
// produce an identifier, the case the error branch in newAddrConn handles.
func newClientConn(channelzID *Identifier) *ClientConn {
	cc := &ClientConn{
		conns:      make(map[*addrConn]struct{}),
		channelzID: channelzID,
		csMgr:      &connectivityStateManager{state: "IDLE"},
	}
	cc.balancer = &ccBalancerWrapper{cc: cc}
	cc.balancer.balancer = &pickfirstBalancer{cc: cc.balancer}
	return cc
}

func main() {
	cc := newClientConn(nil)
	err := cc.balancer.balancer.UpdateClientConnState(ClientConnState{
		Addresses: []Address{{Addr: "10.0.0.7:50051"}},
	})
	fmt.Println("resolver update:", err)
	fmt.Println("closing channel")
	fmt.Println("close:", cc.Close())
}
