// Project: grpc/grpc-go (xds/internal/balancer/edsbalancer: eds.go, eds_impl.go, balancergroup), v1.27/v1.28, early 2020.
// Bug: edsBalancerImpl.handleEDSResponse holds priorityMu while it pushes the new addresses of each locality into the
// priority's BalancerGroup; when a locality has no healthy endpoints the round_robin child reports TransientFailure
// inline from UpdateClientConnState, and that update travels back through the BalancerGroup and edsBalancerWrapperCC
// into edsImpl.updateState, whose handlePriorityWithNewState locks priorityMu again, so the EDS run goroutine blocks
// on itself. Fixed by grpc/grpc-go#3418 ("eds: handle child balancer state asynchronously"), which queues child state
// updates and handles them from the run goroutine.
package main

import (
	"errors"
	"fmt"
	"sync"
)

type balancerState struct {
	ConnectivityState string // CONNECTING, READY, TRANSIENT_FAILURE
	Err               error  // what the picker returns
}

type clientConn interface{ UpdateState(balancerState) }

type balancer interface {
	UpdateClientConnState(addresses []string) error
}

// baseBalancer is balancer/base, the round_robin policy.
type baseBalancer struct {
	cc       clientConn
	subConns map[string]bool
	state    string
}

func newRoundRobin(cc clientConn) balancer {
	return &baseBalancer{cc: cc, subConns: map[string]bool{}, state: "CONNECTING"}
}

func (b *baseBalancer) UpdateClientConnState(addresses []string) error {
	if len(addresses) == 0 && len(b.subConns) == 0 {
		// ResolverError: reported inline, from inside UpdateClientConnState.
		b.state = "TRANSIENT_FAILURE"
		b.cc.UpdateState(balancerState{ConnectivityState: b.state, Err: errors.New("produced zero addresses")})
		return errors.New("bad resolver state")
	}
	for _, a := range addresses {
		b.subConns[a] = true
	}
	return nil
}

// subBalancerWithConfig is the ClientConn a BalancerGroup hands to each child policy.
type subBalancerWithConfig struct {
	id    string
	group *balancerGroup
	b     balancer
}

func (sbc *subBalancerWithConfig) UpdateState(s balancerState) {
	sbc.group.updateBalancerState(sbc.id, s)
}

type balancerGroup struct {
	cc                 clientConn
	outgoingMu         sync.Mutex
	idToBalancerConfig map[string]*subBalancerWithConfig
	incomingMu         sync.Mutex
	idToPickerAndState map[string]balancerState
}

func (bg *balancerGroup) Add(id string, build func(clientConn) balancer) {
	bg.outgoingMu.Lock()
	defer bg.outgoingMu.Unlock()
	sbc := &subBalancerWithConfig{id: id, group: bg}
	sbc.b, bg.idToBalancerConfig[id] = build(sbc), sbc
}

func (bg *balancerGroup) UpdateClientConnState(id string, addresses []string) error {
	bg.outgoingMu.Lock()
	defer bg.outgoingMu.Unlock()
	if sbc, ok := bg.idToBalancerConfig[id]; ok {
		return sbc.b.UpdateClientConnState(addresses)
	}
	return nil
}

func (bg *balancerGroup) updateBalancerState(id string, s balancerState) {
	bg.incomingMu.Lock()
	defer bg.incomingMu.Unlock()
	bg.idToPickerAndState[id] = s
	bg.cc.UpdateState(s) // the aggregated weighted picker in the real code
}

type priorityType int

// edsBalancerWrapperCC is the ClientConn handed to the BalancerGroup of one priority.
type edsBalancerWrapperCC struct {
	priority priorityType
	parent   *edsBalancerImpl
}

func (ebwcc *edsBalancerWrapperCC) UpdateState(s balancerState) {
	ebwcc.parent.updateState(ebwcc.priority, s)
}

type locality struct {
	id        string
	priority  priorityType
	endpoints []string // healthy endpoints only
}

type edsBalancerImpl struct {
	cc                   clientConn
	priorityMu           sync.Mutex
	priorityToLocalities map[priorityType]*balancerGroup
	priorityInUse        priorityType
	priorityToState      map[priorityType]balancerState
}

func (edsImpl *edsBalancerImpl) handleEDSResponse(localities []locality) {
	edsImpl.priorityMu.Lock()
	defer edsImpl.priorityMu.Unlock()
	for _, l := range localities {
		bg, ok := edsImpl.priorityToLocalities[l.priority]
		if !ok {
			ccPriorityWrapper := &edsBalancerWrapperCC{priority: l.priority, parent: edsImpl}
			bg = &balancerGroup{cc: ccPriorityWrapper, idToBalancerConfig: map[string]*subBalancerWithConfig{},
				idToPickerAndState: map[string]balancerState{}}
			edsImpl.priorityToLocalities[l.priority] = bg
		}
		edsImpl.handleEDSResponsePerPriority(bg, l)
	}
}

func (edsImpl *edsBalancerImpl) handleEDSResponsePerPriority(bg *balancerGroup, l locality) {
	if _, ok := bg.idToBalancerConfig[l.id]; !ok {
		bg.Add(l.id, newRoundRobin)
	}
	_ = bg.UpdateClientConnState(l.id, l.endpoints)
}

func (edsImpl *edsBalancerImpl) updateState(priority priorityType, s balancerState) {
	if edsImpl.handlePriorityWithNewState(priority, s) {
		edsImpl.cc.UpdateState(s)
	}
}

func (edsImpl *edsBalancerImpl) handlePriorityWithNewState(priority priorityType, s balancerState) bool {
	edsImpl.priorityMu.Lock()
	defer edsImpl.priorityMu.Unlock()
	edsImpl.priorityToState[priority] = s
	return priority == edsImpl.priorityInUse
}

// edsBalancer (eds.go) serializes xDS client updates on its run goroutine.
type edsBalancer struct {
	edsImpl         *edsBalancerImpl
	xdsClientUpdate chan []locality
}

func (x *edsBalancer) run() {
	for u := range x.xdsClientUpdate {
		x.edsImpl.handleEDSResponse(u)
	}
}

type testClientConn struct{ states chan balancerState }

func (cc *testClientConn) UpdateState(s balancerState) { cc.states <- s }

func main() {
	cc := &testClientConn{states: make(chan balancerState, 10)}
	x := &edsBalancer{xdsClientUpdate: make(chan []locality), edsImpl: &edsBalancerImpl{cc: cc, priorityToState: map[priorityType]balancerState{}, priorityToLocalities: map[priorityType]*balancerGroup{}}}
	go x.run()

	// EDS response: one locality in priority 0 whose endpoints are all unhealthy.
	x.xdsClientUpdate <- []locality{{id: "us-east-1a", priority: 0}}
	s := <-cc.states
	fmt.Println("channel state:", s.ConnectivityState, "pick error:", s.Err)
}
