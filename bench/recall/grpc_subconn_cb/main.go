// Modeled on grpc-go's ClientConn/addrConn lock-order deadlock (grpc-go
// ~v1.7-1.10, fixed by no longer calling into the ClientConn while holding
// ac.mu): addrConn.transportMonitor/updateConnectivityState notified the
// balancer wrapper (which takes cc.mu) while still holding ac.mu, while
// ClientConn.Close held cc.mu and called ac.tearDown, which takes ac.mu.
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
	Shutdown
)

// stateListener is implemented by the ClientConn (balancer wrapper).
type stateListener interface {
	handleSubConnStateChange(ac *addrConn, s connectivityState)
}

type addrConn struct {
	mu    sync.Mutex
	state connectivityState
	cc    stateListener
}

func (ac *addrConn) updateConnectivityState(s connectivityState) {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	ac.state = s
	ac.cc.handleSubConnStateChange(ac, s) // listener invoked with ac.mu held
}

func (ac *addrConn) tearDown() {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	ac.state = Shutdown
}

type ClientConn struct {
	mu    sync.Mutex
	conns map[*addrConn]struct{}
	csMgr map[*addrConn]connectivityState
}

func (cc *ClientConn) handleSubConnStateChange(ac *addrConn, s connectivityState) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.csMgr[ac] = s
}

func (cc *ClientConn) Close() {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for ac := range cc.conns {
		ac.tearDown()
	}
	cc.conns = nil
}

func main() {
	cc := &ClientConn{
		conns: map[*addrConn]struct{}{},
		csMgr: map[*addrConn]connectivityState{},
	}
	ac := &addrConn{cc: cc}
	cc.conns[ac] = struct{}{}

	go func() { // transport monitor
		for _, s := range []connectivityState{Connecting, Ready, Idle} {
			ac.updateConnectivityState(s)
		}
	}()
	go cc.Close()

	time.Sleep(50 * time.Millisecond)
	fmt.Println("done")
}
