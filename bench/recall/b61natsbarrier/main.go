// Project: nats-io/nats.go (the Go client for NATS), v1.4.x / v1.5.0, early 2018.
// Files/functions: nats.go: Conn.Barrier, Conn.TLSRequired, Conn.subscribe,
// Conn.waitForMsgs (barrier processing), barrierInfo.
// Issue: nats-io/nats.go#345 "Synchronous Barrier call holds conn mutex",
// fixed by nats-io/nats.go#346.
//
// Barrier(f) schedules f to run after every asynchronous subscription has
// drained the messages queued so far. When the connection has no
// asynchronous subscription at all, f is run right away, synchronously. The
// buggy version did that while it still held both nc.mu (write-locked at the
// top of Barrier) and nc.subsMu. A callback that calls back into the
// connection, for example TLSRequired, which read-locks nc.mu, therefore
// blocks on the lock its own goroutine holds. Once there is at least one
// asynchronous subscription the callback runs later from the subscription's
// delivery goroutine without any lock, which is why the bug only shows up on
// connections without async subscribers. The fix releases subsMu and mu
// before calling f in the no-subscription case.
package main

import (
	"fmt"
	"sync"
)

type SubscriptionType int

const (
	AsyncSubscription SubscriptionType = iota
	SyncSubscription
	ChanSubscription
)

type serverInfo struct {
	ID           string
	TLSRequired  bool
	AuthRequired bool
}

type barrierInfo struct {
	refs int64
	f    func()
}

type Msg struct {
	Subject string
	Data    []byte
	barrier *barrierInfo
	next    *Msg
}

type Subscription struct {
	mu    sync.Mutex
	sid   int64
	typ   SubscriptionType
	mch   chan *Msg
	pHead *Msg
	pTail *Msg
	pCond *sync.Cond
}

type Conn struct {
	mu     sync.RWMutex
	subsMu sync.RWMutex
	subs   map[int64]*Subscription
	info   serverInfo
	closed bool
	ssid   int64
}

func newConn() *Conn {
	return &Conn{
		subs: make(map[int64]*Subscription),
		info: serverInfo{ID: "NDJWE4SOUJOJT2TY", TLSRequired: false},
	}
}

func (nc *Conn) isClosed() bool { return nc.closed }

// SubscribeSync creates a synchronous subscription: it does not count for
// Barrier, which only waits on asynchronous ones.
func (nc *Conn) SubscribeSync(subj string) *Subscription {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	nc.subsMu.Lock()
	defer nc.subsMu.Unlock()
	nc.ssid++
	sub := &Subscription{sid: nc.ssid, typ: SyncSubscription, mch: make(chan *Msg, 64)}
	sub.pCond = sync.NewCond(&sub.mu)
	nc.subs[sub.sid] = sub
	return sub
}

// TLSRequired will return if the connected server requires TLS connections.
func (nc *Conn) TLSRequired() bool {
	nc.mu.RLock()
	defer nc.mu.RUnlock()
	return nc.info.TLSRequired
}

// AuthRequired will return if the connected server requires authorization.
func (nc *Conn) AuthRequired() bool {
	nc.mu.RLock()
	defer nc.mu.RUnlock()
	return nc.info.AuthRequired
}

// Barrier schedules the given function `f` to all registered asynchronous
// subscriptions. Only the last subscription to see this barrier will invoke
// the function. If no subscription is registered at the time of this call,
// `f()` is invoked right away.
func (nc *Conn) Barrier(f func()) error {
	nc.mu.Lock()
	if nc.isClosed() {
		nc.mu.Unlock()
		return fmt.Errorf("nats: connection closed")
	}
	nc.subsMu.Lock()
	// Need to figure out how many non chan subscriptions there are
	numSubs := 0
	for _, sub := range nc.subs {
		if sub.typ == AsyncSubscription {
			numSubs++
		}
	}
	if numSubs == 0 {
		f()
		nc.subsMu.Unlock()
		nc.mu.Unlock()
		return nil
	}
	barrier := &barrierInfo{refs: int64(numSubs), f: f}
	for _, sub := range nc.subs {
		sub.mu.Lock()
		if sub.mch == nil {
			msg := &Msg{barrier: barrier}
			if sub.pTail != nil {
				sub.pTail.next = msg
			} else {
				sub.pHead = msg
				sub.pCond.Signal()
			}
			sub.pTail = msg
		}
		sub.mu.Unlock()
	}
	nc.subsMu.Unlock()
	nc.mu.Unlock()
	return nil
}

// connReport is the application side: once everything queued so far has
// been handled it records what the server asked of this connection.
type connReport struct {
	nc     *Conn
	tls    bool
	auth   bool
	doneCh chan struct{}
}

func (r *connReport) collect() {
	r.tls = r.nc.TLSRequired()
	r.auth = r.nc.AuthRequired()
	close(r.doneCh)
}

func reportAfterDrain(nc *Conn) *connReport {
	r := &connReport{nc: nc, doneCh: make(chan struct{})}
	if err := nc.Barrier(r.collect); err != nil {
		fmt.Println("barrier:", err)
	}
	return r
}

func main() {
	nc := newConn()
	nc.SubscribeSync("orders.>")
	r := reportAfterDrain(nc)
	<-r.doneCh
	fmt.Println("tls required:", r.tls, "auth required:", r.auth)
}
