// Project: grpc/grpc-go (balancer.go: roundRobin; clientconn.go: lbWatcher, resetAddrConn, addrConn), v1.4/v1.5, mid 2017.
// Bug: roundRobin.watchAddrUpdates holds rr.mu while it hands the new address list to the ClientConn on the unbuffered
// rr.addrCh. The only reader, ClientConn.lbWatcher, calls back into the balancer synchronously while it applies the
// previous list (Up when an addrConn becomes ready on the blocking dial path, down from addrConn.tearDown), and both
// callbacks take rr.mu, so a second resolver update arriving while lbWatcher is busy wedges both goroutines and the
// Dial. Fixed by grpc/grpc-go#1353 ("Fix mutex deadlock of roundrobin balancer"): addrCh gets a one-slot buffer that
// is drained before each send, so the send under rr.mu never blocks.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type Update struct{ Addr string } // naming.Update{Op: naming.Add}

type Watcher interface{ Next() ([]*Update, error) }

// testWatcher hands out queued update batches, like a DNS or etcd naming.Watcher.
type testWatcher struct{ updates chan []*Update }

func (w *testWatcher) Next() ([]*Update, error) { return <-w.updates, nil }

type Address struct{ Addr string }

type Balancer interface {
	Start(w Watcher)
	Up(addr Address) (down func(error))
	Notify() <-chan []Address
}

type addrInfo struct {
	addr      Address
	connected bool
}

type roundRobin struct {
	w      Watcher
	mu     sync.Mutex
	addrs  []*addrInfo    // all the addresses the client should potentially connect
	addrCh chan []Address // the channel to notify gRPC internals the list of addresses the client should connect to.
}

func (rr *roundRobin) watchAddrUpdates() error {
	updates, err := rr.w.Next()
	rr.mu.Lock()
	defer rr.mu.Unlock()
	for _, update := range updates {
		addr, exist := Address{Addr: update.Addr}, false
		for _, v := range rr.addrs {
			exist = exist || addr == v.addr
		}
		if !exist {
			rr.addrs = append(rr.addrs, &addrInfo{addr: addr})
		}
	}
	// Make a copy of rr.addrs and write it onto rr.addrCh so that gRPC internals gets notified.
	open := make([]Address, len(rr.addrs))
	for i, v := range rr.addrs {
		open[i] = v.addr
	}
	rr.addrCh <- open
	return err
}

func (rr *roundRobin) Start(w Watcher) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	rr.w = w
	rr.addrCh = make(chan []Address)
	go func() {
		for rr.watchAddrUpdates() == nil {
		}
	}()
}

// Up sets the connected state of addr; the returned func is called when the connection goes down.
func (rr *roundRobin) Up(addr Address) func(error) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	for _, a := range rr.addrs {
		if a.addr == addr {
			a.connected = true
		}
	}
	return func(err error) { rr.down(addr, err) }
}

func (rr *roundRobin) down(addr Address, err error) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	for _, a := range rr.addrs {
		if addr == a.addr {
			a.connected = false
		}
	}
}

func (rr *roundRobin) Notify() <-chan []Address { return rr.addrCh }

type ClientConn struct {
	balancer Balancer
	dialTime time.Duration
	mu       sync.RWMutex
	conns    map[Address]*addrConn
}

type addrConn struct {
	cc   *ClientConn
	addr Address
	mu   sync.Mutex
	down func(error) // the handler called when a connection is down.
}

// resetTransport dials the server and reports the ready address to the balancer.
func (ac *addrConn) resetTransport() {
	time.Sleep(ac.cc.dialTime) // TCP + HTTP/2 handshake
	ac.mu.Lock()
	defer ac.mu.Unlock()
	ac.down = ac.cc.balancer.Up(ac.addr)
}

func (ac *addrConn) tearDown(err error) {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	if ac.down != nil {
		ac.down(err)
		ac.down = nil
	}
}

func (cc *ClientConn) resetAddrConn(addr Address, block bool) {
	ac := &addrConn{cc: cc, addr: addr}
	cc.mu.Lock()
	cc.conns[ac.addr] = ac
	cc.mu.Unlock()
	if block {
		ac.resetTransport()
	} else {
		go ac.resetTransport()
	}
}

func (cc *ClientConn) lbWatcher(doneChan chan struct{}) {
	for addrs := range cc.balancer.Notify() {
		var add, keep = []Address{}, map[Address]bool{} // addresses that need a new connection / stay
		var del []*addrConn                             // connections that need to be torn down
		cc.mu.Lock()
		for _, a := range addrs {
			keep[a] = true
			if _, ok := cc.conns[a]; !ok {
				add = append(add, a)
			}
		}
		for k, c := range cc.conns {
			if !keep[k] {
				del = append(del, c)
				delete(cc.conns, k)
			}
		}
		cc.mu.Unlock()
		for _, a := range add {
			cc.resetAddrConn(a, doneChan != nil)
			if doneChan != nil {
				close(doneChan)
				doneChan = nil
			}
		}
		for _, c := range del {
			c.tearDown(errors.New("grpc: the connection is drained"))
		}
	}
}

// Dial with WithBalancer and WithBlock returns once the first address is ready.
func Dial(w Watcher, b Balancer, dialTime time.Duration) *ClientConn {
	cc := &ClientConn{balancer: b, dialTime: dialTime, conns: make(map[Address]*addrConn)}
	b.Start(w)
	doneChan := make(chan struct{})
	go cc.lbWatcher(doneChan)
	<-doneChan
	return cc
}

func main() {
	// The name resolver reports the first backend and, right behind it, a second one.
	w := &testWatcher{updates: make(chan []*Update, 4)}
	w.updates <- []*Update{{Addr: "10.0.0.1:50051"}}
	w.updates <- []*Update{{Addr: "10.0.0.2:50051"}}
	cc := Dial(w, &roundRobin{}, 50*time.Millisecond)
	cc.mu.RLock()
	fmt.Println("dialed, subchannels:", len(cc.conns))
	cc.mu.RUnlock()
}
