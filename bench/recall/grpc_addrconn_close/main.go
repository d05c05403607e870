// Project: grpc-go (clientconn.go / internal/transport/http2_client.go)
// Bug: addrConn.tearDown held ac.mu while closing the current transport.
// The HTTP/2 client transport's Close invokes the onClose handler registered
// by the addrConn -- the addrConn itself, stored as an OnCloseHandler
// interface -- and that handler re-acquires ac.mu: self deadlock.
// Upstream fix: release ac.mu before closing the transport.
package main

import (
	"errors"
	"sync"
	"time"
)

type connectivityState int

const (
	Idle connectivityState = iota
	Ready
	TransientFailure
	Shutdown
)

// OnCloseHandler is what the transport calls back into when it goes away.
type OnCloseHandler interface {
	OnClose(err error)
}

type http2Client struct {
	mu      sync.Mutex
	closed  bool
	onClose OnCloseHandler
}

func newHTTP2Client(h OnCloseHandler) *http2Client {
	return &http2Client{onClose: h}
}

func (t *http2Client) Close(err error) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.closed = true
	t.mu.Unlock()
	t.onClose.OnClose(err)
}

type addrConn struct {
	mu        sync.Mutex
	state     connectivityState
	transport *http2Client
}

func (ac *addrConn) connect() {
	ac.mu.Lock()
	ac.transport = newHTTP2Client(ac)
	ac.updateConnectivityState(Ready)
	ac.mu.Unlock()
}

// OnClose implements OnCloseHandler.
func (ac *addrConn) OnClose(err error) {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	if ac.state == Shutdown {
		return
	}
	ac.transport = nil
	ac.updateConnectivityState(TransientFailure)
}

func (ac *addrConn) updateConnectivityState(s connectivityState) { ac.state = s }

func (ac *addrConn) tearDown(err error) {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	curTr := ac.transport
	ac.transport = nil
	ac.updateConnectivityState(Shutdown)
	if curTr != nil {
		curTr.Close(err) // calls back into ac.OnClose with ac.mu held
	}
}

func main() {
	ac := &addrConn{}
	ac.connect()
	done := make(chan struct{})
	go func() {
		defer close(done)
		ac.tearDown(errors.New("grpc: the connection is closing"))
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
	}
}
