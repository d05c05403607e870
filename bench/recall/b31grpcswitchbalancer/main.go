// Project: grpc/grpc-go (clientconn.go, balancer_conn_wrappers.go,
// xds/internal/balancer/clustermanager, xds/internal/balancer/edsbalancer),
// v1.38/v1.39
// Issue: grpc/grpc-go PR #4536 "internal: fix deadlock during switch_balancer
// and NewSubConn()" (the xds interop hang; related to #4478/#4504).
//
// Bug: an empty LDS response makes the xds resolver push a service config
// without a load balancing policy, so ClientConn.updateResolverState, holding
// cc.mu (taken at line 197), switches from cluster_manager to pick_first:
// switchBalancer closes the old ccBalancerWrapper, and ccBalancerWrapper.close
// fires closed and waits for its watcher goroutine to report done (line
// 356) - with cc.mu still held. The watcher closes the balancer tree:
// cluster_manager's Close closes its children, and every xds balancer's Close
// waits for its own run goroutine to exit. At the same moment the eds
// balancer's run goroutine is handling an EDS response that adds a locality:
// it creates a SubConn through its balancer.ClientConn, ending in
// ccBalancerWrapper.NewSubConn -> ClientConn.newAddrConn, which needs cc.mu
// (line 262). updateResolverState waits for the watcher, the watcher for
// the eds run goroutine, and that goroutine for cc.mu.
// The fix releases cc.mu around balancerWrapper.close() in switchBalancer
// ("Don't hold cc.mu while closing the balancers. The balancers may call
// methods that require cc.mu (e.g. cc.NewSubConn()).").
//
// Trimmed: the cds balancer and the balancer groups/priority policy between
// cluster_manager, eds and round_robin are left out. The reproduction's logger
// stands in for the xds client: when switchBalancer logs the switch, the EDS
// response is delivered to the eds balancer's watch callback, so the eds run
// goroutine gets it while cc.mu is held.
package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// --- grpcsync.Event -----------------------------------------------------------

// Event represents a one-time event that may occur in the future.
type Event struct {
	fired int32
	c     chan struct{}
	o     sync.Once
}

// Fire causes e to complete. It is safe to call multiple times, and
// concurrently. It returns true iff this call to Fire caused the signaling
// channel returned by Done to close.
func (e *Event) Fire() bool {
	ret := false
	e.o.Do(func() {
		atomic.StoreInt32(&e.fired, 1)
		close(e.c)
		ret = true
	})
	return ret
}

// Done returns a channel that will be closed when Fire is called.
func (e *Event) Done() <-chan struct{} { return e.c }

// HasFired returns true if Fire has been called.
func (e *Event) HasFired() bool { return atomic.LoadInt32(&e.fired) == 1 }

// NewEvent returns a new, ready-to-use Event.
func NewEvent() *Event { return &Event{c: make(chan struct{})} }

// --- logging (grpclog / channelz) ----------------------------------------------

type LoggerV2 interface {
	Infof(format string, args ...interface{})
}

type defaultLogger struct{}

func (defaultLogger) Infof(format string, args ...interface{}) {
	fmt.Printf("INFO: "+format+"\n", args...)
}

var logger LoggerV2 = defaultLogger{}

func channelzInfof(l LoggerV2, id int64, format string, args ...interface{}) {
	l.Infof("[core] [Channel #%d] "+format, append([]interface{}{id}, args...)...)
}

// --- resolver / balancer API ----------------------------------------------------

type Address struct {
	Addr string
}

type ServiceConfig struct {
	LB *string
}

type State struct {
	Addresses     []Address
	ServiceConfig *ServiceConfig
}

type ConnectivityState int

const (
	Idle ConnectivityState = iota
	Connecting
	Ready
)

type SubConn interface {
	UpdateAddresses([]Address)
	Connect()
}

type NewSubConnOptions struct{}

type BalancerState struct {
	ConnectivityState ConnectivityState
}

// BalancerClientConn is balancer.ClientConn: what a balancer uses to talk back.
type BalancerClientConn interface {
	NewSubConn([]Address, NewSubConnOptions) (SubConn, error)
	RemoveSubConn(SubConn)
	UpdateState(BalancerState)
}

type ClientConnState struct {
	ResolverState State
}

type SubConnState struct {
	ConnectivityState ConnectivityState
}

// Balancer is balancer.Balancer.
type Balancer interface {
	UpdateClientConnState(ClientConnState) error
	UpdateSubConnState(SubConn, SubConnState)
	Close()
}

type BuildOptions struct{}

// Builder is balancer.Builder.
type Builder interface {
	Build(cc BalancerClientConn, opts BuildOptions) Balancer
	Name() string
}

var balancers = map[string]Builder{}

func Register(b Builder) { balancers[strings.ToLower(b.Name())] = b }

func Get(name string) Builder { return balancers[strings.ToLower(name)] }

// --- ClientConn -----------------------------------------------------------------

const PickFirstBalancerName = "pick_first"

var ErrClientConnClosing = errors.New("grpc: the client connection is closing")
var errConnDrain = errors.New("grpc: the connection is drained")

type addrConn struct {
	ctx    context.Context
	cancel context.CancelFunc
	cc     *ClientConn
	addrs  []Address

	mu    sync.Mutex
	state ConnectivityState
	acbw  *acBalancerWrapper
}

type ClientConn struct {
	ctx    context.Context
	cancel context.CancelFunc

	target     string
	channelzID int64

	balancerBuildOpts BuildOptions

	mu              sync.RWMutex
	sc              *ServiceConfig
	conns           map[*addrConn]struct{}
	curBalancerName string
	balancerWrapper *ccBalancerWrapper

	firstResolveEvent *Event
}

func (cc *ClientConn) updateResolverState(s State, err error) error {
	defer cc.firstResolveEvent.Fire()
	cc.mu.Lock()
	// Check if the ClientConn is already closed. Some fields (e.g.
	// balancerWrapper) are set to nil when closing the ClientConn, and could
	// cause nil pointer panic if we don't have this check.
	if cc.conns == nil {
		cc.mu.Unlock()
		return nil
	}

	if s.ServiceConfig != nil {
		cc.applyServiceConfigAndBalancer(s.ServiceConfig, s.Addresses)
	}

	bw := cc.balancerWrapper
	cc.mu.Unlock()

	return bw.updateClientConnState(&ClientConnState{ResolverState: s})
}

func (cc *ClientConn) applyServiceConfigAndBalancer(sc *ServiceConfig, addrs []Address) {
	cc.sc = sc

	var newBalancerName string
	if cc.sc != nil && cc.sc.LB != nil {
		newBalancerName = *cc.sc.LB
	} else {
		newBalancerName = PickFirstBalancerName
	}
	cc.switchBalancer(newBalancerName)
}

// switchBalancer starts the switching from current balancer to the balancer
// with the given name.
//
// Caller must hold cc.mu.
func (cc *ClientConn) switchBalancer(name string) {
	if strings.EqualFold(cc.curBalancerName, name) {
		return
	}

	channelzInfof(logger, cc.channelzID, "ClientConn switching balancer to %q", name)
	if cc.balancerWrapper != nil {
		cc.balancerWrapper.close()
	}

	builder := Get(name)
	if builder == nil {
		builder = Get(PickFirstBalancerName)
	}

	cc.curBalancerName = builder.Name()
	cc.balancerWrapper = newCCBalancerWrapper(cc, builder, cc.balancerBuildOpts)
}

// newAddrConn creates an addrConn for addrs and adds it to cc.conns.
//
// Caller needs to make sure len(addrs) > 0.
func (cc *ClientConn) newAddrConn(addrs []Address, opts NewSubConnOptions) (*addrConn, error) {
	ac := &addrConn{
		cc:    cc,
		addrs: addrs,
		state: Idle,
	}
	ac.ctx, ac.cancel = context.WithCancel(cc.ctx)
	// Track ac in cc. This needs to be done before any getTransport(...) is called.
	cc.mu.Lock()
	if cc.conns == nil {
		cc.mu.Unlock()
		return nil, ErrClientConnClosing
	}
	cc.conns[ac] = struct{}{}
	cc.mu.Unlock()
	return ac, nil
}

// removeAddrConn removes the addrConn in the subConn from clientConn.
// It also tears down the ac with the given error.
func (cc *ClientConn) removeAddrConn(ac *addrConn, err error) {
	cc.mu.Lock()
	if cc.conns == nil {
		cc.mu.Unlock()
		return
	}
	delete(cc.conns, ac)
	cc.mu.Unlock()
	ac.cancel()
}

// --- ccBalancerWrapper ----------------------------------------------------------

type scStateUpdate struct {
	sc    SubConn
	state ConnectivityState
}

// ccBalancerWrapper is a wrapper on top of cc for balancers.
// It implements balancer.ClientConn interface.
type ccBalancerWrapper struct {
	cc         *ClientConn
	balancerMu sync.Mutex // synchronizes calls to the balancer
	balancer   Balancer
	scBuffer   chan *scStateUpdate // buffer.Unbounded in grpc
	closed     *Event
	done       *Event

	mu       sync.Mutex
	subConns map[*acBalancerWrapper]struct{}
}

func newCCBalancerWrapper(cc *ClientConn, b Builder, bopts BuildOptions) *ccBalancerWrapper {
	ccb := &ccBalancerWrapper{
		cc:       cc,
		scBuffer: make(chan *scStateUpdate, 16),
		closed:   NewEvent(),
		done:     NewEvent(),
		subConns: make(map[*acBalancerWrapper]struct{}),
	}
	go ccb.watcher()
	ccb.balancer = b.Build(ccb, bopts)
	return ccb
}

// watcher balancer functions sequentially, so the balancer can be implemented
// lock-free.
func (ccb *ccBalancerWrapper) watcher() {
	for {
		select {
		case su := <-ccb.scBuffer:
			if ccb.closed.HasFired() {
				break
			}
			ccb.balancerMu.Lock()
			ccb.balancer.UpdateSubConnState(su.sc, SubConnState{ConnectivityState: su.state})
			ccb.balancerMu.Unlock()
		case <-ccb.closed.Done():
		}

		if ccb.closed.HasFired() {
			ccb.balancerMu.Lock()
			ccb.balancer.Close()
			ccb.balancerMu.Unlock()
			ccb.mu.Lock()
			scs := ccb.subConns
			ccb.subConns = nil
			ccb.mu.Unlock()
			ccb.done.Fire()
			// Fire done before removing the addr conns.  We can safely unblock
			// ccb.close and allow the removeAddrConns to happen
			// asynchronously.
			for acbw := range scs {
				ccb.cc.removeAddrConn(acbw.getAddrConn(), errConnDrain)
			}
			return
		}
	}
}

func (ccb *ccBalancerWrapper) close() {
	ccb.closed.Fire()
	<-ccb.done.Done()
}

func (ccb *ccBalancerWrapper) updateClientConnState(ccs *ClientConnState) error {
	ccb.balancerMu.Lock()
	defer ccb.balancerMu.Unlock()
	return ccb.balancer.UpdateClientConnState(*ccs)
}

func (ccb *ccBalancerWrapper) NewSubConn(addrs []Address, opts NewSubConnOptions) (SubConn, error) {
	if len(addrs) <= 0 {
		return nil, fmt.Errorf("grpc: cannot create SubConn with empty address list")
	}
	ccb.mu.Lock()
	defer ccb.mu.Unlock()
	if ccb.subConns == nil {
		return nil, fmt.Errorf("grpc: ClientConn balancer wrapper was closed")
	}
	ac, err := ccb.cc.newAddrConn(addrs, opts)
	if err != nil {
		return nil, err
	}
	acbw := &acBalancerWrapper{ac: ac}
	acbw.ac.mu.Lock()
	ac.acbw = acbw
	acbw.ac.mu.Unlock()
	ccb.subConns[acbw] = struct{}{}
	return acbw, nil
}

func (ccb *ccBalancerWrapper) RemoveSubConn(sc SubConn) {
	acbw, ok := sc.(*acBalancerWrapper)
	if !ok {
		return
	}
	ccb.mu.Lock()
	defer ccb.mu.Unlock()
	if ccb.subConns == nil {
		return
	}
	delete(ccb.subConns, acbw)
	ccb.cc.removeAddrConn(acbw.getAddrConn(), errConnDrain)
}

func (ccb *ccBalancerWrapper) UpdateState(s BalancerState) {}

// acBalancerWrapper is a wrapper on top of ac for balancers.
// It implements balancer.SubConn interface.
type acBalancerWrapper struct {
	mu sync.Mutex
	ac *addrConn
}

func (acbw *acBalancerWrapper) UpdateAddresses(addrs []Address) {
	acbw.mu.Lock()
	defer acbw.mu.Unlock()
	acbw.ac.addrs = addrs
}

func (acbw *acBalancerWrapper) Connect() {}

func (acbw *acBalancerWrapper) getAddrConn() *addrConn {
	acbw.mu.Lock()
	defer acbw.mu.Unlock()
	return acbw.ac
}

// --- pick_first -----------------------------------------------------------------

type pickfirstBuilder struct{}

func (*pickfirstBuilder) Build(cc BalancerClientConn, opt BuildOptions) Balancer {
	return &pickfirstBalancer{cc: cc}
}

func (*pickfirstBuilder) Name() string { return PickFirstBalancerName }

type pickfirstBalancer struct {
	state ConnectivityState
	cc    BalancerClientConn
	sc    SubConn
}

func (b *pickfirstBalancer) UpdateClientConnState(cs ClientConnState) error {
	if len(cs.ResolverState.Addresses) == 0 {
		return errors.New("produced zero addresses")
	}
	if b.sc == nil {
		var err error
		b.sc, err = b.cc.NewSubConn(cs.ResolverState.Addresses, NewSubConnOptions{})
		if err != nil {
			return err
		}
		b.sc.Connect()
	} else {
		b.sc.UpdateAddresses(cs.ResolverState.Addresses)
	}
	return nil
}

func (b *pickfirstBalancer) UpdateSubConnState(sc SubConn, s SubConnState) {
	b.state = s.ConnectivityState
}
func (b *pickfirstBalancer) Close() {}

// --- xds_cluster_manager_experimental --------------------------------------------

const clusterManagerName = "xds_cluster_manager_experimental"

type clusterManagerBuilder struct {
	// children builds the child policies; a cds -> eds chain per cluster in
	// grpc, one eds balancer here.
	children func(cc BalancerClientConn) map[string]Balancer
}

func (b *clusterManagerBuilder) Build(cc BalancerClientConn, opts BuildOptions) Balancer {
	return &bal{children: b.children(cc)}
}

func (b *clusterManagerBuilder) Name() string { return clusterManagerName }

// bal is clustermanager.bal.
type bal struct {
	children map[string]Balancer
}

func (b *bal) UpdateClientConnState(s ClientConnState) error { return nil }

func (b *bal) UpdateSubConnState(sc SubConn, state SubConnState) {
	for _, child := range b.children {
		child.UpdateSubConnState(sc, state)
	}
}

func (b *bal) Close() {
	for _, child := range b.children {
		child.Close()
	}
}

// --- eds_experimental -------------------------------------------------------------

type Endpoint struct {
	Address string
}

type Locality struct {
	Endpoints []Endpoint
	Priority  uint32
}

type EndpointsUpdate struct {
	Localities []Locality
}

type edsUpdate struct {
	resp EndpointsUpdate
	err  error
}

// edsBalancerImpl implements the EDS policy: it turns EDS responses into
// localities, priorities and finally SubConns.
type edsBalancerImpl struct {
	cc BalancerClientConn

	subConnMu         sync.Mutex
	subConnToPriority map[SubConn]uint32
}

func (edsImpl *edsBalancerImpl) handleEDSResponse(edsResp EndpointsUpdate) {
	for _, locality := range edsResp.Localities {
		for _, ep := range locality.Endpoints {
			// round_robin, under the locality's balancer group, creates a
			// SubConn per endpoint; the call reaches the parent ClientConn.
			sc, err := edsImpl.cc.NewSubConn([]Address{{Addr: ep.Address}}, NewSubConnOptions{})
			if err != nil {
				continue
			}
			edsImpl.subConnMu.Lock()
			edsImpl.subConnToPriority[sc] = locality.Priority
			edsImpl.subConnMu.Unlock()
			sc.Connect()
		}
	}
}

func (edsImpl *edsBalancerImpl) close() {}

// edsBalancer manages xdsClient and the actual EDS balancer implementation that
// does load balancing.
type edsBalancer struct {
	cc     BalancerClientConn
	closed *Event
	done   *Event

	// edsBalancer continuously monitors the channels below, and will handle
	// events from them in sync.
	grpcUpdate      chan interface{}
	xdsClientUpdate chan *edsUpdate

	edsImpl *edsBalancerImpl
}

func newEDSBalancer(cc BalancerClientConn) *edsBalancer {
	x := &edsBalancer{
		cc:              cc,
		closed:          NewEvent(),
		done:            NewEvent(),
		grpcUpdate:      make(chan interface{}),
		xdsClientUpdate: make(chan *edsUpdate),
		edsImpl:         &edsBalancerImpl{cc: cc, subConnToPriority: make(map[SubConn]uint32)},
	}
	go x.run()
	return x
}

// run gets executed in a goroutine once edsBalancer is created. It monitors
// updates from grpc, xdsClient and load balancer. It synchronizes the
// operations that happen inside edsBalancer. It exits when edsBalancer is
// closed.
func (x *edsBalancer) run() {
	for {
		select {
		case update := <-x.grpcUpdate:
			x.handleGRPCUpdate(update)
		case update := <-x.xdsClientUpdate:
			x.handleXDSClientUpdate(update)
		case <-x.closed.Done():
			x.edsImpl.close()
			x.done.Fire()
			return
		}
	}
}

func (x *edsBalancer) handleGRPCUpdate(update interface{}) {}

func (x *edsBalancer) handleXDSClientUpdate(update *edsUpdate) {
	if err := update.err; err != nil {
		return
	}
	x.edsImpl.handleEDSResponse(update.resp)
}

// handleEDSUpdate is the watch callback given to the xds client.
func (x *edsBalancer) handleEDSUpdate(resp EndpointsUpdate, err error) {
	select {
	case x.xdsClientUpdate <- &edsUpdate{resp: resp, err: err}:
	case <-x.closed.Done():
	}
}

func (x *edsBalancer) UpdateClientConnState(s ClientConnState) error {
	select {
	case x.grpcUpdate <- &s:
	case <-x.closed.Done():
	}
	return nil
}

func (x *edsBalancer) UpdateSubConnState(sc SubConn, state SubConnState) {}

func (x *edsBalancer) Close() {
	x.closed.Fire()
	<-x.done.Done()
}

// --- reproduction harness -----------------------------------------------------

// xdsLogger is the logger installed by the reproduction: it delivers the
// pending EDS response when the ClientConn announces the balancer switch.
type xdsLogger struct {
	onSwitch func()
}

func (l *xdsLogger) Infof(format string, args ...interface{}) {
	fmt.Printf("INFO: "+format+"\n", args...)
	if strings.Contains(format, "switching balancer") && l.onSwitch != nil {
		f := l.onSwitch
		l.onSwitch = nil
		f()
	}
}

func main() {
	var eds *edsBalancer
	Register(&pickfirstBuilder{})
	Register(&clusterManagerBuilder{children: func(cc BalancerClientConn) map[string]Balancer {
		eds = newEDSBalancer(cc)
		return map[string]Balancer{"cluster_1": eds}
	}})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cc := &ClientConn{
		ctx:               ctx,
		cancel:            cancel,
		target:            "xds:///server.example.com",
		channelzID:        1,
		conns:             make(map[*addrConn]struct{}),
		firstResolveEvent: NewEvent(),
	}
	cm := clusterManagerName
	cc.mu.Lock()
	cc.switchBalancer(cm) // the xds resolver's first service config
	cc.mu.Unlock()

	logger = &xdsLogger{onSwitch: func() {
		// The xds client's EDS watch fires: a new locality.
		eds.handleEDSUpdate(EndpointsUpdate{Localities: []Locality{{
			Endpoints: []Endpoint{{Address: "10.0.0.7:8080"}},
			Priority:  0,
		}}}, nil)
	}}

	// Empty LDS response: the xds resolver sends a service config with no LB
	// policy, so the channel switches to pick_first.
	err := cc.updateResolverState(State{
		Addresses:     []Address{{Addr: "10.0.0.9:8080"}},
		ServiceConfig: &ServiceConfig{},
	}, nil)
	fmt.Println("updateResolverState:", err, "balancer:", cc.curBalancerName)
}
