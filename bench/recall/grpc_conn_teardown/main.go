// Modelled on grpc-go clientconn.go: ClientConn.updateAddrs / Close hold cc.mu
// while looping over cc.conns and calling ac.tearDown(), which acquires the
// addrConn's own ac.mu. addrConn never calls back into ClientConn while holding
// ac.mu (state changes are published through a channel instead), so the lock
// order cc.mu -> ac.mu is never inverted.
package main

import (
	"errors"
	"fmt"
	"sync"
)

var errConnDrain = errors.New("grpc: the connection is drained")

type addrConn struct {
	addr    string
	mu      sync.Mutex
	state   string
	tearErr error
	stateCh chan<- string // buffered; send never blocks the caller for long
}

func (ac *addrConn) connect() {
	ac.mu.Lock()
	if ac.state == "IDLE" {
		ac.state = "READY"
	}
	ac.mu.Unlock()
}

// tearDown takes only ac.mu.
func (ac *addrConn) tearDown(err error) {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	if ac.state == "SHUTDOWN" {
		return
	}
	ac.state = "SHUTDOWN"
	ac.tearErr = err
	select {
	case ac.stateCh <- ac.addr + ":SHUTDOWN":
	default:
	}
}

type ClientConn struct {
	mu      sync.Mutex
	conns   map[string]*addrConn
	closed  bool
	stateCh chan string
}

func newClientConn() *ClientConn {
	return &ClientConn{conns: make(map[string]*addrConn), stateCh: make(chan string, 64)}
}

// updateAddrs tears down connections that are no longer resolved while
// holding cc.mu, and creates new ones.
func (cc *ClientConn) updateAddrs(addrs []string) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.closed {
		return
	}
	want := make(map[string]bool, len(addrs))
	for _, a := range addrs {
		want[a] = true
		if _, ok := cc.conns[a]; !ok {
			ac := &addrConn{addr: a, state: "IDLE", stateCh: cc.stateCh}
			cc.conns[a] = ac
			ac.connect()
		}
	}
	for a, ac := range cc.conns {
		if !want[a] {
			ac.tearDown(errConnDrain)
			delete(cc.conns, a)
		}
	}
}

func (cc *ClientConn) Close() {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.closed {
		return
	}
	cc.closed = true
	for _, ac := range cc.conns {
		ac.tearDown(errors.New("grpc: the client connection is closing"))
	}
	cc.conns = nil
}

func main() {
	cc := newClientConn()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < 10; i++ {
			cc.updateAddrs([]string{fmt.Sprintf("10.0.0.%d:443", i%3), "10.0.0.9:443"})
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < 10; i++ {
			cc.updateAddrs([]string{"10.0.0.9:443"})
		}
	}()
	wg.Wait()
	cc.Close()
	close(cc.stateCh)
	n := 0
	for range cc.stateCh {
		n++
	}
	fmt.Println("shutdown notifications:", n)
}
