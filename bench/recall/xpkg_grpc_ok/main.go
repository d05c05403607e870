// grpc_ok: modeled on grpc-go balancers (a round_robin-like policy receiving
// UpdateSubConnState from the ClientConn). ClientConn calls the balancer with
// ClientConn.mu held, and roundRobin.resolve holds rr.mu while calling
// ClientConn.NewSubConn. Correct: UpdateSubConnState only uses rr.mu.TryLock,
// so a goroutine holding ClientConn.mu never waits for rr.mu; on failure the
// update is parked in an atomic counter and picked up by the next resolve.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"

	"example.com/recall/xpkg_grpc_ok/balancer"
)

type roundRobin struct {
	mu     sync.Mutex
	cc     *balancer.ClientConn
	ready  []string
	missed atomic.Int32
}

// UpdateSubConnState implements balancer.Balancer without blocking.
func (b *roundRobin) UpdateSubConnState(addr string, ready bool) {
	if !b.mu.TryLock() {
		b.missed.Add(1)
		return
	}
	defer b.mu.Unlock()
	if ready {
		b.ready = append(b.ready, addr)
	}
}

func (b *roundRobin) resolve(addrs []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, a := range addrs {
		b.cc.NewSubConn(a)
	}
	b.missed.Store(0)
}

func main() {
	cc := balancer.NewClientConn()
	rr := &roundRobin{cc: cc}
	cc.SetBalancer(rr)
	addrs := []string{"10.0.0.1:443", "10.0.0.2:443"}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); rr.resolve(addrs) }()
	go func() {
		defer wg.Done()
		for _, a := range addrs {
			cc.MarkReady(a)
		}
	}()
	wg.Wait()
	fmt.Println("ready:", len(rr.ready), "missed:", rr.missed.Load())
}
