// Project: grpc/grpc-go (clientconn_test.go TestClientUpdatesParamsAfterGoAway, clientconn.go ClientConn.Close and addrConn.adjustParams, internal/transport GOAWAY handling), v1.38.0, June 2021 (issue #4537, fixed by PR #4534 "grpc: prevent deadlock in Test/ClientUpdatesParamsAfterGoAway on failure"; surrounding code shape approximate).
// Bug: the test polls cc.mkp.Time under cc.mu.RLock and, when its deadline expires, calls t.Fatalf without releasing the read lock. Fatalf ends the goroutine with runtime.Goexit, so the deferred cc.Close runs while the same goroutine still holds the read lock and blocks on cc.mu.Lock forever, and the transport's late GOAWAY handling (addrConn.adjustParams) blocks on cc.mu.Lock as well, so the test hangs instead of failing. The fix copies the value and releases the read lock before checking it.
package b98grpcgoawayparams

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// ---- keepalive / transport ----

type ClientParameters struct {
	Time                time.Duration
	Timeout             time.Duration
	PermitWithoutStream bool
}

type GoAwayReason uint8

const (
	GoAwayInvalid GoAwayReason = iota
	GoAwayNoReason
	GoAwayTooManyPings
)

type http2Client struct {
	mu           sync.Mutex
	closed       bool
	goAwayReason GoAwayReason
	onGoAway     func(GoAwayReason)
}

// handleGoAway is run by the transport reader when a GOAWAY frame arrives.
func (t *http2Client) handleGoAway(reason GoAwayReason) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.goAwayReason = reason
	t.mu.Unlock()
	t.onGoAway(reason)
}

func (t *http2Client) Close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
}

// fakeServer stands in for the test server whose keepalive enforcement
// answers too frequent pings with GOAWAY(ENHANCE_YOUR_CALM, "too_many_pings").
type fakeServer struct {
	mu         sync.Mutex
	transports []*http2Client
}

func (s *fakeServer) accept(t *http2Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.transports = append(s.transports, t)
}

func (s *fakeServer) sendGoAway(reason GoAwayReason) {
	s.mu.Lock()
	ts := append([]*http2Client(nil), s.transports...)
	s.mu.Unlock()
	for _, t := range ts {
		t.handleGoAway(reason)
	}
}

// ---- clientconn.go ----

var ErrClientConnClosing = errors.New("grpc: the client connection is closing")

type dialOptions struct{ kp ClientParameters }

type ClientConn struct {
	dopts dialOptions
	mu    sync.RWMutex
	conns map[*addrConn]struct{}
	mkp   ClientParameters
}

type addrConn struct {
	cc        *ClientConn
	mu        sync.Mutex
	transport *http2Client
}

func Dial(srv *fakeServer, kp ClientParameters) (*ClientConn, error) {
	cc := &ClientConn{dopts: dialOptions{kp: kp}, conns: make(map[*addrConn]struct{}), mkp: kp}
	ac := &addrConn{cc: cc}
	cc.mu.Lock()
	cc.conns[ac] = struct{}{}
	cc.mu.Unlock()
	ac.createTransport(srv)
	return cc, nil
}

func (ac *addrConn) createTransport(srv *fakeServer) {
	t := &http2Client{onGoAway: ac.adjustParams}
	ac.mu.Lock()
	ac.transport = t
	ac.mu.Unlock()
	srv.accept(t)
}

// adjustParams doubles the keepalive time after GOAWAY(too_many_pings).
func (ac *addrConn) adjustParams(r GoAwayReason) {
	switch r {
	case GoAwayTooManyPings:
		v := 2 * ac.cc.dopts.kp.Time
		ac.cc.mu.Lock()
		if v > ac.cc.mkp.Time {
			ac.cc.mkp.Time = v
		}
		ac.cc.mu.Unlock()
	}
}

func (ac *addrConn) tearDown(err error) {
	ac.mu.Lock()
	t := ac.transport
	ac.transport = nil
	ac.mu.Unlock()
	if t != nil {
		t.Close()
	}
}

func (cc *ClientConn) Close() error {
	cc.mu.Lock()
	if cc.conns == nil {
		cc.mu.Unlock()
		return ErrClientConnClosing
	}
	conns := cc.conns
	cc.conns = nil
	cc.mu.Unlock()
	for ac := range conns {
		ac.tearDown(ErrClientConnClosing)
	}
	return nil
}

// ---- clientconn_test.go ----

// tester is the part of *testing.T the test body uses; Fatalf ends the
// calling goroutine with runtime.Goexit exactly like testing.T does.
type tester interface {
	Fatalf(format string, args ...any)
}

type goexitT struct {
	msg     string
	onFatal func()
}

func (g *goexitT) Fatalf(format string, args ...any) {
	g.msg = fmt.Sprintf(format, args...)
	g.onFatal()
	runtime.Goexit()
}

func testClientUpdatesParamsAfterGoAway(t tester, srv *fakeServer) {
	cc, err := Dial(srv, ClientParameters{Time: 10 * time.Second, Timeout: 100 * time.Millisecond, PermitWithoutStream: true})
	if err != nil {
		t.Fatalf("Dial() = _, %v, want _, <nil>", err)
	}
	defer cc.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	for {
		time.Sleep(10 * time.Millisecond)
		cc.mu.RLock()
		v := cc.mkp.Time
		if v == 20*time.Second {
			// Success
			cc.mu.RUnlock()
			return
		}
		if ctx.Err() != nil {
			// Timeout
			t.Fatalf("cc.dopts.copts.Keepalive.Time = %v , want 20s", v)
		}
		cc.mu.RUnlock()
	}
}

func TestB98grpcgoawayparams(t *testing.T) {
	srv := &fakeServer{}
	gaveUp := make(chan struct{})
	ft := &goexitT{onFatal: func() { close(gaveUp) }}

	testDone := make(chan struct{})
	go func() {
		defer close(testDone)
		testClientUpdatesParamsAfterGoAway(ft, srv)
	}()

	// An unrelated network problem delays the server's GOAWAY until after
	// the client gave up waiting for it.
	goAwayDone := make(chan struct{})
	go func() {
		defer close(goAwayDone)
		<-gaveUp
		srv.sendGoAway(GoAwayTooManyPings)
	}()

	<-testDone
	<-goAwayDone
	if !strings.Contains(ft.msg, "want 20s") {
		t.Fatalf("expected the inner test to report its timeout, got %q", ft.msg)
	}
}
