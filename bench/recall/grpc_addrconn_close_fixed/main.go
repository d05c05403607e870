// Project: grpc-go (clientconn.go / internal/transport/http2_client.go)
// FIXED twin of grpc_addrconn_close: tearDown updates state under ac.mu and
// releases the lock before closing the transport, so the transport's
// OnClose callback into the addrConn can take ac.mu safely.
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
	curTr := ac.transport
	ac.transport = nil
	ac.updateConnectivityState(Shutdown)
	ac.mu.Unlock()
	if curTr != nil {
		curTr.Close(err) // OnClose sees Shutdown and returns
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
