// Project: grpc-go (clientconn.go, balancer_conn_wrappers.go), v1.24.0
// Issue: grpc/grpc-go#3047 "deadlock: acquire multiple locks in the same order in clientconn", fixed by PR #3051 "clientconn: fix potential deadlock caused by ResetConnectBackoff"
//
// FIXED TWIN (PR #3051): ResetConnectBackoff copies cc.conns under cc.mu (line 70),
// releases it, and only then calls ac.resetConnectBackoff (line 74), which takes ac.mu
// (line 100). The addrConn's own resetTransport goroutine takes ac.mu first
// (line 110) and, while holding it, reports the new state through
// ac.updateConnectivityState (line 118) -> cc.handleSubConnStateChange, which
// takes cc.mu (line 58). With cc.mu no longer held across ac.mu there is no
// cycle; the same interleaving as the buggy program (main calls ResetConnectBackoff
// while the transport holds ac.mu) now completes.
package main

import (
	"fmt"
	"sync"
	"time"
)

type connectivityState int

const (
	Idle connectivityState = iota
	Connecting
	Ready
	TransientFailure
	Shutdown
)

func (s connectivityState) String() string {
	return [...]string{"IDLE", "CONNECTING", "READY", "TRANSIENT_FAILURE", "SHUTDOWN"}[s]
}

// ccBalancerWrapper forwards SubConn state changes to the balancer.
type ccBalancerWrapper struct {
	updates []string
}

func (ccb *ccBalancerWrapper) handleSubConnStateChange(sc *acBalancerWrapper, s connectivityState) {
	ccb.updates = append(ccb.updates, fmt.Sprintf("%s -> %v", sc.ac.addr, s))
}

// acBalancerWrapper is the balancer.SubConn handed to the balancer.
type acBalancerWrapper struct {
	ac *addrConn
}

type ClientConn struct {
	target string

	mu              sync.RWMutex
	conns           map[*addrConn]struct{}
	balancerWrapper *ccBalancerWrapper
}

// handleSubConnStateChange is called by addrConns with ac.mu held.
func (cc *ClientConn) handleSubConnStateChange(sc *acBalancerWrapper, s connectivityState) {
	cc.mu.Lock()
	if cc.conns == nil {
		cc.mu.Unlock()
		return
	}
	cc.balancerWrapper.handleSubConnStateChange(sc, s)
	cc.mu.Unlock()
}

// ResetConnectBackoff wakes up all subchannels in transient failure and causes
// them to attempt another connection immediately.
func (cc *ClientConn) ResetConnectBackoff() {
	cc.mu.Lock()
	conns := cc.conns
	cc.mu.Unlock()
	for ac := range conns {
		ac.resetConnectBackoff()
	}
}

type addrConn struct {
	cc   *ClientConn
	addr string
	acbw *acBalancerWrapper

	mu           sync.Mutex
	state        connectivityState
	backoffIdx   int
	resetBackoff chan struct{}
	transport    interface{}
}

// updateConnectivityState must be called with ac.mu held.
func (ac *addrConn) updateConnectivityState(s connectivityState) {
	if ac.state == s {
		return
	}
	ac.state = s
	ac.cc.handleSubConnStateChange(ac.acbw, s)
}

func (ac *addrConn) resetConnectBackoff() {
	ac.mu.Lock()
	close(ac.resetBackoff)
	ac.backoffIdx = 0
	ac.resetBackoff = make(chan struct{})
	ac.mu.Unlock()
}

// resetTransport makes one connection attempt (the real one loops until it
// gets a transport or the addrConn shuts down).
func (ac *addrConn) resetTransport() {
	ac.mu.Lock()
	if ac.state == Shutdown {
		ac.mu.Unlock()
		return
	}
	// Picking the address and computing the backoff deadline happen here,
	// under ac.mu.
	time.Sleep(50 * time.Millisecond)
	ac.updateConnectivityState(Connecting)
	ac.transport = nil
	ac.mu.Unlock()

	// Dial outside the lock.
	time.Sleep(5 * time.Millisecond)

	ac.mu.Lock()
	ac.transport = struct{}{}
	ac.updateConnectivityState(Ready)
	ac.mu.Unlock()
}

func (cc *ClientConn) newAddrConn(addr string) *addrConn {
	ac := &addrConn{cc: cc, addr: addr, state: Idle, resetBackoff: make(chan struct{})}
	ac.acbw = &acBalancerWrapper{ac: ac}
	cc.mu.Lock()
	cc.conns[ac] = struct{}{}
	cc.mu.Unlock()
	return ac
}

func main() {
	cc := &ClientConn{
		target:          "dns:///backend:443",
		conns:           make(map[*addrConn]struct{}),
		balancerWrapper: &ccBalancerWrapper{},
	}
	ac := cc.newAddrConn("10.0.0.1:443")

	done := make(chan struct{})
	go func() {
		ac.resetTransport()
		close(done)
	}()

	// The application resets the backoff (e.g. on a network change) while the
	// subchannel is in the middle of resetTransport.
	time.Sleep(10 * time.Millisecond)
	cc.ResetConnectBackoff()
	<-done

	cc.mu.RLock()
	fmt.Println("state updates:", cc.balancerWrapper.updates)
	cc.mu.RUnlock()
}
