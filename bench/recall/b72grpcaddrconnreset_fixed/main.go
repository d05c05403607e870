// Command b72grpcaddrconnreset models grpc-go's ClientConn and addrConn
// (clientconn.go) with a single pick_first subchannel, the resolver update
// that pushes a new address list to every addrConn, and the transport reader
// that reports a closed connection back to the channel.
//
// Modelled on grpc-go, no specific upstream bug. ClientConn.updateResolverState
// holds cc.mu while it calls addrConn.updateAddrs, which takes ac.mu. When the
// current address disappears from the list, tearDownTransportLocked drops
// ac.mu around the slow graceful close of the old transport and takes it back
// afterwards, while cc.mu stays held by the caller. The close wakes the
// transport reader goroutine, which locks ac.mu to mark the subchannel idle
// and then reports the state change through handleSubConnStateChange, which
// needs cc.mu. The resolver goroutine now waits for ac.mu and the reader
// goroutine for cc.mu.
//
// The fixed twin copies the set of addrConns under cc.mu and updates them
// after releasing it, so the reader can take cc.mu while ac.mu is dropped.
package main

import (
	"fmt"
	"sync"
	"time"
)

type State int

const (
	Idle State = iota
	Connecting
	Ready
	TransientFailure
	Shutdown
)

func (s State) String() string {
	return [...]string{"IDLE", "CONNECTING", "READY", "TRANSIENT_FAILURE", "SHUTDOWN"}[s]
}

type Address struct {
	Addr string
}

type http2Client struct {
	addr    Address
	goAway  chan struct{}
	done    chan struct{}
	onClose func(t *http2Client)
}

func newHTTP2Client(addr Address, onClose func(*http2Client)) *http2Client {
	t := &http2Client{addr: addr, goAway: make(chan struct{}), done: make(chan struct{}), onClose: onClose}
	go t.reader()
	return t
}

func (t *http2Client) reader() {
	defer close(t.done)
	<-t.goAway
	t.onClose(t)
}

func (t *http2Client) GracefulClose() {
	close(t.goAway)
	time.Sleep(50 * time.Millisecond)
}

type connectivityStateManager struct {
	mu    sync.Mutex
	state State
}

func (csm *connectivityStateManager) updateState(s State) {
	csm.mu.Lock()
	defer csm.mu.Unlock()
	csm.state = s
}

type ClientConn struct {
	target string
	mu     sync.RWMutex
	conns  map[*addrConn]struct{}
	csMgr  *connectivityStateManager
}

type addrConn struct {
	cc        *ClientConn
	mu        sync.Mutex
	addrs     []Address
	curAddr   Address
	state     State
	transport *http2Client
}

func (cc *ClientConn) newAddrConn(addrs []Address) *addrConn {
	ac := &addrConn{cc: cc, addrs: addrs, state: Idle}
	cc.mu.Lock()
	cc.conns[ac] = struct{}{}
	cc.mu.Unlock()
	return ac
}

func (cc *ClientConn) handleSubConnStateChange(ac *addrConn, s State) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.conns == nil {
		return
	}
	cc.csMgr.updateState(s)
}

func (cc *ClientConn) updateResolverState(addrs []Address) {
	cc.mu.Lock()
	conns := make([]*addrConn, 0, len(cc.conns))
	for ac := range cc.conns {
		conns = append(conns, ac)
	}
	cc.mu.Unlock()
	for _, ac := range conns {
		ac.updateAddrs(addrs)
	}
}

func (ac *addrConn) connect() {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	ac.curAddr = ac.addrs[0]
	ac.transport = newHTTP2Client(ac.curAddr, ac.onTransportClose)
	ac.updateConnectivityState(Ready)
}

func (ac *addrConn) updateConnectivityState(s State) {
	if ac.state == s {
		return
	}
	ac.state = s
	ac.cc.handleSubConnStateChange(ac, s)
}

func (ac *addrConn) onTransportClose(t *http2Client) {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	if ac.state == Shutdown {
		return
	}
	ac.updateConnectivityState(Idle)
}

func (ac *addrConn) updateAddrs(addrs []Address) {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	ac.addrs = addrs
	if ac.state != Ready && ac.state != Connecting {
		return
	}
	for _, a := range addrs {
		if a == ac.curAddr {
			return
		}
	}
	ac.tearDownTransportLocked()
	ac.curAddr = addrs[0]
}

func (ac *addrConn) tearDownTransportLocked() {
	t := ac.transport
	ac.transport = nil
	ac.mu.Unlock()
	t.GracefulClose()
	ac.mu.Lock()
}

func main() {
	cc := &ClientConn{target: "dns:///payments.internal:443", conns: map[*addrConn]struct{}{}, csMgr: &connectivityStateManager{}}
	ac := cc.newAddrConn([]Address{{Addr: "10.1.0.7:443"}})
	ac.connect()
	old := ac.transport

	cc.updateResolverState([]Address{{Addr: "10.1.0.9:443"}, {Addr: "10.1.0.10:443"}})
	<-old.done

	cc.csMgr.mu.Lock()
	state := cc.csMgr.state
	cc.csMgr.mu.Unlock()
	fmt.Println(cc.target, "now at", ac.curAddr.Addr, "channel state", state)
}
