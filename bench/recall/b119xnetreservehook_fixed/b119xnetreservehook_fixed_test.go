// Project: golang.org/x/net (http2/transport_wrap.go ClientConn.reserveNewRequest, stateHook and updateStateLocked, on top of Go 1.27 net/http clientconn.go ClientConn.Reserve and maybeRunStateHook), x/net v0.57.0, August 2026.
// Bug: with Go 1.27 the deprecated http2.ClientConn wraps a net/http ClientConn and installs its stateHook with SetStateHook. reserveNewRequest (and roundTrip without a reservation, same pattern, not modelled) held the wrapper's cc.mu while calling the net/http ClientConn's Reserve, whose deferred maybeRunStateHook runs the user hook synchronously when the conn state changed since the last run (here the server's SETTINGS raised the concurrency limit and the read loop has not run the hook yet); the hook is the wrapper's stateHook, which locks cc.mu again on the same goroutine, so the pool goroutine and every later request on the conn hang (golang/go#80680, fixed in x/net v0.58.0 by calling Reserve without cc.mu held).
package b119xnetreservehookfixed

import (
	"errors"
	"sync"
	"testing"
)

// genericClientConn is what net/http uses for HTTP/2 client conns.
type genericClientConn interface {
	Reserve() error
	Release()
	Available() int
	InFlight() int
	Err() error
}

// http2ClientConn is net/http's internal HTTP/2 client conn.
type http2ClientConn struct {
	mu                   sync.Mutex
	maxConcurrentStreams int
	streamsReserved      int
	streams              map[uint32]bool
	connErr              error
	internalStateHook    func() // ClientConn.maybeRunStateHook
}

var testHookReadLoopBeforeStateHook func()

func (cc *http2ClientConn) Reserve() error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.connErr != nil || len(cc.streams)+cc.streamsReserved >= cc.maxConcurrentStreams {
		return errors.New("http2: no available concurrency slot")
	}
	cc.streamsReserved++
	return nil
}

func (cc *http2ClientConn) Release() {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.streamsReserved > 0 {
		cc.streamsReserved--
	}
}

func (cc *http2ClientConn) Available() int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.maxConcurrentStreams - len(cc.streams) - cc.streamsReserved
}

func (cc *http2ClientConn) InFlight() int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return len(cc.streams) + cc.streamsReserved
}

func (cc *http2ClientConn) Err() error { return cc.connErr } // set by the read loop on a conn error

// processSettings runs on the read loop when the server's SETTINGS frame arrives.
func (cc *http2ClientConn) processSettings(maxConcurrentStreams int) {
	cc.mu.Lock()
	cc.maxConcurrentStreams = maxConcurrentStreams
	cc.mu.Unlock()
	if testHookReadLoopBeforeStateHook != nil {
		testHookReadLoopBeforeStateHook()
	}
	cc.internalStateHook() // the concurrency limit changed
}

// httpClientConn is net/http's ClientConn (clientconn.go).
type httpClientConn struct {
	cc                          genericClientConn
	stateHookMu                 sync.Mutex
	userStateHook               func(*httpClientConn)
	stateHookRunning            bool
	lastAvailable, lastInFlight int
	lastClosed                  bool
}

func (cc *httpClientConn) Reserve() error {
	defer cc.maybeRunStateHook()
	return cc.cc.Reserve()
}

func (cc *httpClientConn) Release() {
	defer cc.maybeRunStateHook()
	cc.cc.Release()
}

func (cc *httpClientConn) shouldRunStateHook(stopRunning bool) func(*httpClientConn) {
	cc.stateHookMu.Lock()
	defer cc.stateHookMu.Unlock()
	if stopRunning {
		cc.stateHookRunning = false
	}
	if cc.userStateHook == nil || cc.stateHookRunning {
		return nil
	}
	available, inFlight, closed := cc.cc.Available(), cc.cc.InFlight(), cc.cc.Err() != nil
	var hook func(*httpClientConn)
	if available > cc.lastAvailable || inFlight < cc.lastInFlight || closed != cc.lastClosed {
		hook = cc.userStateHook
		cc.stateHookRunning = true
	}
	cc.lastAvailable, cc.lastInFlight, cc.lastClosed = available, inFlight, closed
	return hook
}

func (cc *httpClientConn) maybeRunStateHook() {
	hook := cc.shouldRunStateHook(false)
	if hook == nil {
		return
	}
	hook(cc) // run synchronously, so a pool can take the conn back before the next request
	if hook = cc.shouldRunStateHook(true); hook != nil {
		go func() {
			for hook != nil {
				hook(cc)
				hook = cc.shouldRunStateHook(true)
			}
		}()
	}
}

func (cc *httpClientConn) SetStateHook(f func(*httpClientConn)) {
	cc.stateHookMu.Lock()
	cc.userStateHook = f
	cc.stateHookMu.Unlock()
	cc.maybeRunStateHook()
}

// ClientConn is x/net/http2's ClientConn wrapping the net/http one (transport_wrap.go).
type ClientConn struct {
	cc              *httpClientConn
	doNotReuse      bool
	mu              sync.Mutex
	closing, closed bool
	reserved, maxC  int
}

func newUserClientConn(nhcc *httpClientConn) *ClientConn {
	cc := &ClientConn{cc: nhcc}
	nhcc.SetStateHook(cc.stateHook)
	return cc
}

func (cc *ClientConn) ReserveNewRequest() bool { return cc.reserveNewRequest() }

func (cc *ClientConn) reserveNewRequest() bool {
	if err := cc.cc.Reserve(); err != nil {
		return false
	}
	reserved := true
	cc.mu.Lock()
	if cc.doNotReuse {
		reserved = false
	} else {
		cc.reserved++
	}
	cc.mu.Unlock()
	if !reserved {
		cc.cc.Release()
	}
	return reserved
}

// stateHook is the http.ClientConn's state hook.
func (cc *ClientConn) stateHook(*httpClientConn) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.updateStateLocked()
}

func (cc *ClientConn) updateStateLocked() {
	if cc.cc.cc.Err() != nil && !cc.closed {
		cc.closing, cc.closed = true, true
	}
	if !cc.closed {
		cc.maxC = cc.cc.cc.Available() + cc.cc.cc.InFlight()
	}
}

func TestB119xnetreservehookFixed(t *testing.T) {
	h2 := &http2ClientConn{maxConcurrentStreams: 100, streams: map[uint32]bool{}}
	nhcc := &httpClientConn{cc: h2, lastAvailable: h2.Available()} // Transport.NewClientConn
	h2.internalStateHook = nhcc.maybeRunStateHook
	cc := newUserClientConn(nhcc)

	settingsApplied, resume := make(chan struct{}), make(chan struct{})
	testHookReadLoopBeforeStateHook = func() { close(settingsApplied); <-resume }
	readLoopDone := make(chan struct{})
	go func() { // read loop: the server's initial SETTINGS raise MAX_CONCURRENT_STREAMS
		defer close(readLoopDone)
		h2.processSettings(250)
	}()

	poolDone := make(chan error)
	go func() { // connection pool: reserve a concurrency slot for the next request
		<-settingsApplied
		if !cc.ReserveNewRequest() {
			poolDone <- errors.New("no slot reserved")
			return
		}
		poolDone <- nil // the slot is consumed by the next RoundTrip
	}()
	if err := <-poolDone; err != nil {
		t.Fatal(err)
	}
	close(resume)
	<-readLoopDone
	testHookReadLoopBeforeStateHook = nil
}
