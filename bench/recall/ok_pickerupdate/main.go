// Pattern B. Modelled on grpc-go balancer code: the balancer rebuilds its
// picker via an onUpdate hook (set once in the constructor) while b.mu is
// held. The hook only calls *Locked helpers, which assume the lock is held
// and never acquire it themselves.
package main

import (
	"fmt"
	"sync"
)

type connState int

const (
	idle connState = iota
	ready
	failure
)

type picker struct{ addrs []string }

type balancer struct {
	mu       sync.Mutex
	subconns map[string]connState
	picker   *picker
	onUpdate func(b *balancer)
	rebuilds int
}

func newBalancer() *balancer {
	b := &balancer{subconns: make(map[string]connState)}
	b.onUpdate = func(b *balancer) {
		b.picker = &picker{addrs: b.readyAddrsLocked()}
		b.rebuilds++
	}
	return b
}

// readyAddrsLocked requires b.mu held.
func (b *balancer) readyAddrsLocked() []string {
	var out []string
	for a, st := range b.subconns {
		if st == ready {
			out = append(out, a)
		}
	}
	return out
}

// UpdateSubConnState records a state change and regenerates the picker.
func (b *balancer) UpdateSubConnState(addr string, st connState) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if old, ok := b.subconns[addr]; ok && old == st {
		return
	}
	b.subconns[addr] = st
	b.onUpdate(b)
}

func (b *balancer) Pick(n int) (string, bool) {
	b.mu.Lock()
	p := b.picker
	b.mu.Unlock()
	if p == nil || len(p.addrs) == 0 {
		return "", false
	}
	return p.addrs[n%len(p.addrs)], true
}

func main() {
	b := newBalancer()
	addrs := []string{"10.0.0.1:443", "10.0.0.2:443", "10.0.0.3:443", "10.0.0.4:443"}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 250; i++ {
				b.UpdateSubConnState(addrs[(g+i)%len(addrs)], connState((g*i)%3))
			}
		}(g)
	}
	picked := 0
	var pmu sync.Mutex
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				if _, ok := b.Pick(i); ok {
					pmu.Lock()
					picked++
					pmu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	fmt.Println("rebuilds>0", b.rebuilds > 0, "picks", picked)
}
