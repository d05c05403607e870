// Project: grpc/grpc-go — clientconn.go / idle.go (channel idleness, v1.57)
// Fix PR grpc/grpc-go#6538 ("clientconn: release lock when returning from
// enterIdleMode()"); follow-up test issue grpc/grpc-go#6560 (race between
// cc.exitIdleMode and cc.enterIdleMode).
//
// ClientConn.enterIdleMode is invoked by the idleness manager's timer
// (handleIdleTimeout -> tryEnterIdleMode -> enforcer.enterIdleMode). It locks
// cc.mu and, if the channel is not in the Active idleness state (e.g. an RPC
// is concurrently running exitIdleMode, state ExitingIdle), it logs and
// returns nil WITHOUT unlocking cc.mu. The exiting-idle RPC path then blocks
// forever in exitIdleMode's deferred cc.mu.Lock() (line 90), and so does
// every later Close/NewStream that needs cc.mu.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

var ErrClientConnClosing = errors.New("grpc: the client connection is closing")

type ccIdlenessState int8

const (
	ccIdlenessStateActive ccIdlenessState = iota
	ccIdlenessStateIdle
	ccIdlenessStateExitingIdle
)

type addrConn struct{ addr string }

// ccBalancerWrapper sits between the ClientConn and the LB policy.
type ccBalancerWrapper struct {
	exitIdleHook func()
}

func (ccb *ccBalancerWrapper) exitIdleMode()  { ccb.exitIdleHook() } // rebuild gracefulswitch balancer
func (ccb *ccBalancerWrapper) enterIdleMode() {}

type idlenessEnforcer interface {
	exitIdleMode() error
	enterIdleMode() error
}

// idlenessManagerImpl calls enterIdleMode when the channel has been idle for
// the configured timeout.
type idlenessManagerImpl struct {
	enforcer idlenessEnforcer
	timeout  time.Duration
	timer    *time.Timer
}

func newIdlenessManager(enforcer idlenessEnforcer, idleTimeout time.Duration) *idlenessManagerImpl {
	i := &idlenessManagerImpl{enforcer: enforcer, timeout: idleTimeout}
	i.timer = time.AfterFunc(idleTimeout, i.handleIdleTimeout)
	return i
}

func (i *idlenessManagerImpl) handleIdleTimeout() { i.tryEnterIdleMode() }

func (i *idlenessManagerImpl) tryEnterIdleMode() bool {
	if err := i.enforcer.enterIdleMode(); err != nil {
		return false
	}
	return true
}

type ClientConn struct {
	mu            sync.RWMutex
	conns         map[*addrConn]struct{}
	idlenessState ccIdlenessState
	ccb           *ccBalancerWrapper
}

// exitIdleMode moves the channel out of idle mode by recreating the name
// resolver and load balancer.
func (cc *ClientConn) exitIdleMode() error {
	cc.mu.Lock()
	if cc.conns == nil {
		cc.mu.Unlock()
		return ErrClientConnClosing
	}
	if cc.idlenessState != ccIdlenessStateIdle {
		cc.mu.Unlock()
		return nil
	}
	defer func() {
		cc.mu.Lock() // blocks forever: cc.mu leaked by enterIdleMode
		if cc.idlenessState == ccIdlenessStateExitingIdle {
			cc.idlenessState = ccIdlenessStateActive
		}
		cc.mu.Unlock()
	}()
	cc.idlenessState = ccIdlenessStateExitingIdle
	cc.mu.Unlock()

	cc.ccb.exitIdleMode()
	return nil
}

// enterIdleMode puts the channel in idle mode, and as part of it shuts down the
// name resolver, load balancer and any subchannels.
func (cc *ClientConn) enterIdleMode() error {
	cc.mu.Lock()
	if cc.conns == nil {
		cc.mu.Unlock()
		return ErrClientConnClosing
	}
	if cc.idlenessState != ccIdlenessStateActive {
		fmt.Printf("ClientConn asked to enter idle mode, current mode is %v\n", cc.idlenessState)
		return nil // cc.mu is never released
	}
	conns := cc.conns
	cc.conns = make(map[*addrConn]struct{})
	cc.idlenessState = ccIdlenessStateIdle
	cc.mu.Unlock()

	cc.ccb.enterIdleMode()
	_ = conns // ac.tearDown(errConnIdling) for each
	return nil
}

func main() {
	cc := &ClientConn{conns: map[*addrConn]struct{}{{addr: "10.0.0.1:443"}: {}}, idlenessState: ccIdlenessStateIdle}
	cc.ccb = &ccBalancerWrapper{exitIdleHook: func() {
		// while the LB policy is being rebuilt, the idle timer fires
		time.Sleep(150 * time.Millisecond)
	}}
	newIdlenessManager(cc, 20*time.Millisecond)

	// a new RPC arrives while the channel is idle
	if err := cc.exitIdleMode(); err != nil {
		fmt.Println("exitIdleMode:", err)
	}
	fmt.Println("RPC proceeds, state:", cc.idlenessState)
}
