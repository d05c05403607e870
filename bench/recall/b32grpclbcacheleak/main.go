// Project: grpc-go (balancer/grpclb/grpclb_util.go: lbCacheClientConn), v1.16 .. v1.23
// Issue: grpc/grpc-go PR #3017 "grpclb: fix deadlock in grpclb connection cache"
//
// lbCacheClientConn keeps removed SubConns in subConnCache for a while.
// RemoveSubConn arms a time.AfterFunc whose callback locks ccc.mu (line 134)
// and deletes the SubConn; NewSubConn for the same address cancels it with
// entry.cancel(). If the timer fires while NewSubConn holds ccc.mu, Stop
// fails, so cancel sets entry.abortDeleting and the callback, once it gets
// the lock, is supposed to give up. But it returns on that branch without
// unlocking ccc.mu: the mutex is leaked by the timer goroutine, and the next
// call on the cache (RemoveSubConn, line 110) blocks forever.
//
// main drives the race deterministically: while ccc.mu is held by
// NewSubConn for another address (inside the parent ClientConn's
// NewSubConn), it waits until the timer callback is parked on ccc.mu, then
// NewSubConn for the cached address cancels the fired timer.
package main

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"
)

// --- resolver / balancer ---

type Address struct {
	Addr     string
	Metadata interface{}
}

type SubConn interface {
	UpdateAddresses([]Address)
	Connect()
}

type NewSubConnOptions struct{}

type State struct{}

type ClientConn interface {
	NewSubConn([]Address, NewSubConnOptions) (SubConn, error)
	RemoveSubConn(SubConn)
	UpdateState(State)
}

// --- balancer/grpclb/grpclb_util.go ---

const subConnCacheTime = time.Second * 10

type subConnCacheEntry struct {
	sc SubConn

	cancel        func()
	abortDeleting bool
}

// lbCacheClientConn is a wrapper balancer.ClientConn with a SubConn cache.
// SubConns will be kept in cache for subConnCacheTime before being removed.
//
// Its new and remove methods are updated to do cache first.
type lbCacheClientConn struct {
	cc      ClientConn
	timeout time.Duration

	mu sync.Mutex
	// subConnCache only keeps subConns that are being deleted.
	subConnCache  map[Address]*subConnCacheEntry
	subConnToAddr map[SubConn]Address
}

func newLBCacheClientConn(cc ClientConn) *lbCacheClientConn {
	return &lbCacheClientConn{
		cc:            cc,
		timeout:       subConnCacheTime,
		subConnCache:  make(map[Address]*subConnCacheEntry),
		subConnToAddr: make(map[SubConn]Address),
	}
}

func (ccc *lbCacheClientConn) NewSubConn(addrs []Address, opts NewSubConnOptions) (SubConn, error) {
	if len(addrs) != 1 {
		return nil, fmt.Errorf("grpclb calling NewSubConn with addrs of length %v", len(addrs))
	}
	addrWithoutMD := addrs[0]
	addrWithoutMD.Metadata = nil

	ccc.mu.Lock()
	defer ccc.mu.Unlock()
	if entry, ok := ccc.subConnCache[addrWithoutMD]; ok {
		// If entry is in subConnCache, the SubConn was being deleted.
		// cancel function will never be nil.
		entry.cancel()
		delete(ccc.subConnCache, addrWithoutMD)
		return entry.sc, nil
	}

	scNew, err := ccc.cc.NewSubConn(addrs, opts)
	if err != nil {
		return nil, err
	}

	ccc.subConnToAddr[scNew] = addrWithoutMD
	return scNew, nil
}

func (ccc *lbCacheClientConn) RemoveSubConn(sc SubConn) {
	ccc.mu.Lock()
	defer ccc.mu.Unlock()
	addr, ok := ccc.subConnToAddr[sc]
	if !ok {
		return
	}

	if entry, ok := ccc.subConnCache[addr]; ok {
		if entry.sc != sc {
			// This could happen if NewSubConn was called multiple times for the
			// same address, and those SubConns are all removed. We remove sc
			// immediately here.
			delete(ccc.subConnToAddr, sc)
			ccc.cc.RemoveSubConn(sc)
		}
		return
	}

	entry := &subConnCacheEntry{
		sc: sc,
	}
	ccc.subConnCache[addr] = entry

	timer := time.AfterFunc(ccc.timeout, func() {
		ccc.mu.Lock()
		if entry.abortDeleting {
			return
		}
		ccc.cc.RemoveSubConn(sc)
		delete(ccc.subConnToAddr, sc)
		delete(ccc.subConnCache, addr)
		ccc.mu.Unlock()
	})
	entry.cancel = func() {
		if !timer.Stop() {
			// If stop was not successful, the timer has fired (this can only
			// happen in a race). But the deleting function is blocked on ccc.mu
			// because the mutex was held by the caller of this function.
			//
			// Set abortDeleting to true to abort the deleting function. When
			// the lock is released, the deleting function will acquire the
			// lock, check the value of abortDeleting and return.
			entry.abortDeleting = true
		}
	}
}

func (ccc *lbCacheClientConn) UpdateState(s State) {
	ccc.cc.UpdateState(s)
}

func (ccc *lbCacheClientConn) close() {
	ccc.mu.Lock()
	// Only cancel all existing timers. There's no need to remove SubConns.
	for _, entry := range ccc.subConnCache {
		entry.cancel()
	}
	ccc.mu.Unlock()
}

// --- test doubles: the parent ClientConn (ccBalancerWrapper in grpc) ---

type testSubConn struct{ addr string }

func (sc *testSubConn) UpdateAddresses([]Address) {}
func (sc *testSubConn) Connect()                  {}

type testClientConn struct {
	// onNewSubConn, if set, is run inside NewSubConn.
	onNewSubConn func(addr string)
	removed      []SubConn
}

func (cc *testClientConn) NewSubConn(addrs []Address, opts NewSubConnOptions) (SubConn, error) {
	if cc.onNewSubConn != nil {
		cc.onNewSubConn(addrs[0].Addr)
	}
	return &testSubConn{addr: addrs[0].Addr}, nil
}

func (cc *testClientConn) RemoveSubConn(sc SubConn) { cc.removed = append(cc.removed, sc) }
func (cc *testClientConn) UpdateState(State)        {}

// goroutineParked reports whether some goroutine whose stack mentions fn is
// parked in one of the given wait states.
func goroutineParked(fn string, states ...string) bool {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	for _, g := range strings.Split(string(buf[:n]), "\n\n") {
		if !strings.Contains(g, fn) {
			continue
		}
		hdr := g
		if i := strings.Index(g, "\n"); i >= 0 {
			hdr = g[:i]
		}
		for _, s := range states {
			if strings.Contains(hdr, "["+s) {
				return true
			}
		}
	}
	return false
}

func main() {
	// One P: a goroutine woken by Unlock only runs when main parks, so the
	// interleaving below does not depend on timing.
	runtime.GOMAXPROCS(1)

	cc := &testClientConn{}
	ccc := newLBCacheClientConn(cc)
	ccc.timeout = 10 * time.Millisecond

	a := []Address{{Addr: "10.0.0.1:443"}}
	b := []Address{{Addr: "10.0.0.2:443"}}

	scA, _ := ccc.NewSubConn(a, NewSubConnOptions{})
	// The balancer drops backend A: its SubConn goes into the cache.
	ccc.RemoveSubConn(scA)

	// While NewSubConn(B) holds ccc.mu, the cache timer for A fires and its
	// callback parks on ccc.mu.
	cc.onNewSubConn = func(addr string) {
		for !goroutineParked("(*lbCacheClientConn).RemoveSubConn.func1", "sync.Mutex.Lock") {
			time.Sleep(time.Millisecond)
		}
	}
	scB, _ := ccc.NewSubConn(b, NewSubConnOptions{})
	cc.onNewSubConn = nil

	// The server list brings A back: NewSubConn reuses the cached SubConn and
	// cancels the timer, which has already fired (abortDeleting = true).
	if sc, _ := ccc.NewSubConn(a, NewSubConnOptions{}); sc != scA {
		panic("expected the cached SubConn")
	}

	// Let the timer callback run to completion.
	for goroutineParked("(*lbCacheClientConn).RemoveSubConn.func1", "sync.Mutex.Lock", "runnable") {
		time.Sleep(time.Millisecond)
	}

	// Backend B goes away.
	ccc.RemoveSubConn(scB)
	ccc.close()
	fmt.Println("grpclb cache: removed", len(cc.removed), "subconns")
}
