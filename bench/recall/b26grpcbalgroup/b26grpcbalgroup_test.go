// Project: grpc-go (xds/internal/balancer/balancergroup)
// Bug: BalancerGroup.HandleSubConnStateChange keeps incomingMu while taking
// outgoingMu to forward the update to the sub-balancer, but
// UpdateClientConnState holds outgoingMu while the sub-balancer calls back into
// NewSubConn/UpdateState, which take incomingMu.
// Fix: look up the sub-balancer under incomingMu, release it, then take outgoingMu.
package b26grpcbalgroup

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

type connectivityState int

const (
	Connecting connectivityState = iota
	Ready
	TransientFailure
)

type SubConn interface{}

type Address struct{ Addr string }

type State struct{ ConnectivityState connectivityState }

type ClientConn interface {
	NewSubConn([]Address) (SubConn, error)
	UpdateState(State)
}

type Balancer interface {
	UpdateClientConnState(addrs []Address) error
	UpdateSubConnState(sc SubConn, s connectivityState)
}

type Builder func(cc ClientConn) Balancer

type subBalancerWrapper struct {
	group    *BalancerGroup
	id       string
	builder  Builder
	balancer Balancer
}

func (sbc *subBalancerWrapper) NewSubConn(addrs []Address) (SubConn, error) {
	return sbc.group.newSubConn(sbc, addrs)
}

func (sbc *subBalancerWrapper) UpdateState(s State) {
	sbc.group.updateBalancerState(sbc.id, s)
}

func (sbc *subBalancerWrapper) startBalancer() {
	sbc.balancer = sbc.builder(sbc)
}

type BalancerGroup struct {
	cc ClientConn

	outgoingMu         sync.Mutex
	outgoingStarted    bool
	idToBalancerConfig map[string]*subBalancerWrapper

	incomingMu      sync.Mutex
	incomingStarted bool
	scToSubBalancer map[SubConn]*subBalancerWrapper
	idToPickerState map[string]State
}

func New(cc ClientConn) *BalancerGroup {
	return &BalancerGroup{
		cc:                 cc,
		outgoingStarted:    true,
		incomingStarted:    true,
		idToBalancerConfig: make(map[string]*subBalancerWrapper),
		scToSubBalancer:    make(map[SubConn]*subBalancerWrapper),
		idToPickerState:    make(map[string]State),
	}
}

func (bg *BalancerGroup) Add(id string, builder Builder) {
	bg.incomingMu.Lock()
	bg.idToPickerState[id] = State{ConnectivityState: Connecting}
	bg.incomingMu.Unlock()
	bg.outgoingMu.Lock()
	sbc := &subBalancerWrapper{group: bg, id: id, builder: builder}
	bg.idToBalancerConfig[id] = sbc
	if bg.outgoingStarted {
		sbc.startBalancer()
	}
	bg.outgoingMu.Unlock()
}

func (bg *BalancerGroup) UpdateClientConnState(id string, addrs []Address) error {
	bg.outgoingMu.Lock()
	defer bg.outgoingMu.Unlock()
	if config, ok := bg.idToBalancerConfig[id]; ok && config.balancer != nil {
		return config.balancer.UpdateClientConnState(addrs)
	}
	return fmt.Errorf("balancergroup: unknown sub-balancer %q", id)
}

func (bg *BalancerGroup) HandleSubConnStateChange(sc SubConn, state connectivityState) {
	bg.incomingMu.Lock()
	defer bg.incomingMu.Unlock()
	config, ok := bg.scToSubBalancer[sc]
	if !ok {
		return
	}
	if state == TransientFailure {
		delete(bg.scToSubBalancer, sc)
	}
	bg.outgoingMu.Lock()
	if config.balancer != nil {
		config.balancer.UpdateSubConnState(sc, state)
	}
	bg.outgoingMu.Unlock()
}

func (bg *BalancerGroup) newSubConn(config *subBalancerWrapper, addrs []Address) (SubConn, error) {
	bg.incomingMu.Lock()
	defer bg.incomingMu.Unlock()
	if !bg.incomingStarted {
		return nil, fmt.Errorf("NewSubConn is called after balancer group is closed")
	}
	sc, err := bg.cc.NewSubConn(addrs)
	if err != nil {
		return nil, err
	}
	bg.scToSubBalancer[sc] = config
	return sc, nil
}

func (bg *BalancerGroup) updateBalancerState(id string, state State) {
	bg.incomingMu.Lock()
	defer bg.incomingMu.Unlock()
	bg.idToPickerState[id] = state
	if bg.incomingStarted {
		bg.cc.UpdateState(state)
	}
}

type testSubConn struct{ addr string }

type testClientConn struct {
	mu     sync.Mutex
	states []State
}

func (cc *testClientConn) NewSubConn(a []Address) (SubConn, error) {
	return &testSubConn{addr: a[0].Addr}, nil
}
func (cc *testClientConn) UpdateState(s State) {
	cc.mu.Lock()
	cc.states = append(cc.states, s)
	cc.mu.Unlock()
}

type roundRobin struct {
	cc       ClientConn
	entered  chan struct{}
	subConns []SubConn
}

func (rr *roundRobin) UpdateClientConnState(addrs []Address) error {
	if rr.entered != nil {
		close(rr.entered)
		rr.entered = nil
		time.Sleep(50 * time.Millisecond) // resolving/dialing work
	}
	for _, a := range addrs {
		sc, err := rr.cc.NewSubConn([]Address{a})
		if err != nil {
			return err
		}
		rr.subConns = append(rr.subConns, sc)
	}
	rr.cc.UpdateState(State{ConnectivityState: Connecting})
	return nil
}

func (rr *roundRobin) UpdateSubConnState(sc SubConn, s connectivityState) {
	rr.cc.UpdateState(State{ConnectivityState: s})
}

func TestProbe(t *testing.T) {
	cc := &testClientConn{}
	bg := New(cc)
	bg.Add("locality-a", func(cc ClientConn) Balancer { return &roundRobin{cc: cc} })
	if err := bg.UpdateClientConnState("locality-a", []Address{{"10.1.0.1:443"}}); err != nil {
		t.Fatal(err)
	}
	rr := bg.idToBalancerConfig["locality-a"].balancer.(*roundRobin)
	sc0 := rr.subConns[0]

	entered := make(chan struct{})
	rr.entered = entered
	done := make(chan struct{}, 2)
	go func() {
		bg.UpdateClientConnState("locality-a", []Address{{"10.1.0.1:443"}, {"10.1.0.2:443"}})
		done <- struct{}{}
	}()
	<-entered
	go func() {
		bg.HandleSubConnStateChange(sc0, Ready)
		done <- struct{}{}
	}()
	<-done
	<-done
	if len(rr.subConns) != 3 {
		t.Fatalf("expected 3 subconns, got %d", len(rr.subConns))
	}
}
