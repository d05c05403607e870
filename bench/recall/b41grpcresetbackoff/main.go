// Project: grpc/grpc-go v1.24, files clientconn.go and
// balancer_conn_wrappers.go.
// Issue: grpc/grpc-go#3047 ("deadlock: acquire multiple locks in the same
// order in clientconn"), fixed by PR grpc/grpc-go#3051 "clientconn: fix
// potential deadlock caused by ResetConnectBackoff".
//
// ClientConn.ResetConnectBackoff holds cc.mu while it walks cc.conns and
// calls ac.resetConnectBackoff(), which takes ac.mu (line 190): order
// cc.mu -> ac.mu. The addrConn's reconnect loop, resetTransport, holds ac.mu
// while it moves the subchannel to CONNECTING; updateConnectivityState
// reports the change through ac.cc.handleSubConnStateChange, which takes
// cc.mu (line 134) before handing the update to the balancer wrapper:
// order ac.mu -> cc.mu. An application that calls ResetConnectBackoff while
// a subchannel is reconnecting wedges both goroutines and, with them, every
// RPC on the ClientConn. The fix snapshots cc.conns under cc.mu and calls
// resetConnectBackoff after releasing it.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// ---- connectivity ----

type State int

const (
	Idle State = iota
	Connecting
	Ready
	TransientFailure
	Shutdown
)

// ---- balancer ----

type SubConn interface {
	Connect()
}

type acBalancerWrapper struct {
	mu sync.Mutex
	ac *addrConn
}

func (acbw *acBalancerWrapper) Connect() {
	acbw.mu.Lock()
	defer acbw.mu.Unlock()
	_ = acbw.ac.connect()
}

type scStateUpdate struct {
	sc    SubConn
	state State
}

// scStateUpdateBuffer is an unbounded channel of state updates.
type scStateUpdateBuffer struct {
	c       chan *scStateUpdate
	mu      sync.Mutex
	backlog []*scStateUpdate
}

func newSCStateUpdateBuffer() *scStateUpdateBuffer {
	return &scStateUpdateBuffer{c: make(chan *scStateUpdate, 1)}
}

func (b *scStateUpdateBuffer) put(t *scStateUpdate) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.backlog) == 0 {
		select {
		case b.c <- t:
			return
		default:
		}
	}
	b.backlog = append(b.backlog, t)
}

func (b *scStateUpdateBuffer) load() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.backlog) > 0 {
		select {
		case b.c <- b.backlog[0]:
			b.backlog[0] = nil
			b.backlog = b.backlog[1:]
		default:
		}
	}
}

func (b *scStateUpdateBuffer) get() <-chan *scStateUpdate { return b.c }

type ccBalancerWrapper struct {
	cc               *ClientConn
	stateChangeQueue *scStateUpdateBuffer
	done             chan struct{}
}

func (ccb *ccBalancerWrapper) watcher() {
	for {
		select {
		case t := <-ccb.stateChangeQueue.get():
			ccb.stateChangeQueue.load()
			_ = t // balancer.HandleSubConnStateChange(t.sc, t.state)
		case <-ccb.done:
			return
		}
	}
}

func (ccb *ccBalancerWrapper) handleSubConnStateChange(sc SubConn, s State) {
	if sc == nil {
		return
	}
	ccb.stateChangeQueue.put(&scStateUpdate{sc: sc, state: s})
}

// ---- clientconn.go ----

type ClientConn struct {
	ctx             context.Context
	mu              sync.RWMutex
	conns           map[*addrConn]struct{}
	balancerWrapper *ccBalancerWrapper
}

func (cc *ClientConn) handleSubConnStateChange(sc SubConn, s State) {
	cc.mu.Lock()
	if cc.conns == nil {
		cc.mu.Unlock()
		return
	}
	// TODO(bar switching) send updates to all balancer wrappers when balancer
	// gracefully switching is supported.
	cc.balancerWrapper.handleSubConnStateChange(sc, s)
	cc.mu.Unlock()
}

// ResetConnectBackoff wakes up all subchannels in transient failure and causes
// them to attempt another connection immediately.
func (cc *ClientConn) ResetConnectBackoff() {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for ac := range cc.conns {
		ac.resetConnectBackoff()
	}
}

type addrConn struct {
	ctx    context.Context
	cancel context.CancelFunc
	cc     *ClientConn
	acbw   SubConn

	mu           sync.Mutex
	state        State
	addrs        []string
	backoffIdx   int
	resetBackoff chan struct{}
}

// Note: this requires a lock on ac.mu.
func (ac *addrConn) updateConnectivityState(s State) {
	if ac.state == s {
		return
	}
	ac.state = s
	ac.cc.handleSubConnStateChange(ac.acbw, s)
}

func (ac *addrConn) connect() error {
	ac.mu.Lock()
	if ac.state != Idle {
		ac.mu.Unlock()
		return nil
	}
	ac.updateConnectivityState(Connecting)
	ac.mu.Unlock()
	go ac.resetTransport()
	return nil
}

func (ac *addrConn) resetConnectBackoff() {
	ac.mu.Lock()
	close(ac.resetBackoff)
	ac.backoffIdx = 0
	ac.resetBackoff = make(chan struct{})
	ac.mu.Unlock()
}

// resetTransport is one pass of the reconnect loop after a backoff expired.
func (ac *addrConn) resetTransport() {
	ac.mu.Lock()
	if ac.state == Shutdown {
		ac.mu.Unlock()
		return
	}
	addrs := ac.addrs
	backoffFor := time.Duration(ac.backoffIdx) * time.Second
	// Stand-in for the work done under ac.mu here (backoff and connect
	// deadline computation, channelz tracing); it widens the window.
	time.Sleep(100 * time.Millisecond)
	ac.updateConnectivityState(Connecting)
	ac.mu.Unlock()

	// tryAllAddrs: the network is back, the first address connects.
	_ = addrs
	_ = backoffFor
	ac.mu.Lock()
	ac.updateConnectivityState(Ready)
	ac.mu.Unlock()
}

func main() {
	cc := &ClientConn{ctx: context.Background(), conns: make(map[*addrConn]struct{})}
	cc.balancerWrapper = &ccBalancerWrapper{cc: cc, stateChangeQueue: newSCStateUpdateBuffer(), done: make(chan struct{})}
	go cc.balancerWrapper.watcher()

	ac := &addrConn{cc: cc, state: TransientFailure, addrs: []string{"10.0.0.1:443"}, backoffIdx: 3, resetBackoff: make(chan struct{})}
	ac.ctx, ac.cancel = context.WithCancel(cc.ctx)
	ac.acbw = &acBalancerWrapper{ac: ac}
	cc.conns[ac] = struct{}{}

	// The subchannel's backoff timer fired: it starts reconnecting.
	reconnected := make(chan struct{})
	go func() {
		ac.resetTransport()
		close(reconnected)
	}()

	// Meanwhile the application noticed the network came back.
	time.Sleep(50 * time.Millisecond)
	cc.ResetConnectBackoff()
	<-reconnected

	ac.mu.Lock()
	fmt.Println("subchannel state:", ac.state)
	ac.mu.Unlock()
	close(cc.balancerWrapper.done)
}
