// Modelled on grpc-go's balancer wrapper (balancer_wrapper.go / pickfirst):
// the ClientConn installs an "update state" callback that the balancer calls
// while it still holds its own mutex. The callback only touches atomics.

package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

type connectivityState int32

const (
	idle connectivityState = iota
	connecting
	ready
	transientFailure
)

func (s connectivityState) String() string {
	switch s {
	case idle:
		return "IDLE"
	case connecting:
		return "CONNECTING"
	case ready:
		return "READY"
	default:
		return "TRANSIENT_FAILURE"
	}
}

type balancerState struct {
	state    connectivityState
	numReady int
}

type roundRobinBalancer struct {
	mu       sync.Mutex
	subConns map[string]connectivityState
	onUpdate atomic.Value // func(balancerState)
}

func newRoundRobin() *roundRobinBalancer {
	return &roundRobinBalancer{subConns: make(map[string]connectivityState)}
}

// SetUpdateCallback is called by the ClientConn when it (re)builds the
// balancer wrapper.
func (b *roundRobinBalancer) SetUpdateCallback(cb func(balancerState)) {
	b.onUpdate.Store(cb)
}

func (b *roundRobinBalancer) aggregateLocked() balancerState {
	var st balancerState
	st.state = transientFailure
	for _, s := range b.subConns {
		switch s {
		case ready:
			st.numReady++
			st.state = ready
		case connecting:
			if st.state != ready {
				st.state = connecting
			}
		}
	}
	return st
}

// UpdateSubConnState records the new state and pushes the aggregated state
// to the ClientConn while still holding b.mu, so updates are never reordered.
func (b *roundRobinBalancer) UpdateSubConnState(addr string, s connectivityState) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.subConns[addr] = s
	agg := b.aggregateLocked()
	if cb, ok := b.onUpdate.Load().(func(balancerState)); ok {
		cb(agg)
	}
}

type clientConn struct {
	name       string
	current    atomic.Int32
	updates    atomic.Int64
	readyPicks atomic.Int64
}

func (cc *clientConn) updateState(s balancerState) {
	cc.current.Store(int32(s.state))
	cc.updates.Add(1)
	if s.state == ready {
		cc.readyPicks.Add(int64(s.numReady))
	}
}

func main() {
	b := newRoundRobin()
	primary := &clientConn{name: "primary"}
	b.SetUpdateCallback(primary.updateState)

	addrs := []string{"10.0.0.1:443", "10.0.0.2:443", "10.0.0.3:443", "10.0.0.4:443"}
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Add(1)
		go func(i int, addr string) {
			defer wg.Done()
			seq := []connectivityState{connecting, ready, transientFailure, connecting, ready}
			for round := 0; round < 50; round++ {
				b.UpdateSubConnState(addr, seq[(round+i)%len(seq)])
			}
		}(i, addr)
	}

	// A resolver update swaps the ClientConn callback concurrently.
	secondary := &clientConn{name: "secondary"}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 20; i++ {
			if i%2 == 0 {
				b.SetUpdateCallback(secondary.updateState)
			} else {
				b.SetUpdateCallback(primary.updateState)
			}
		}
	}()
	wg.Wait()

	total := primary.updates.Load() + secondary.updates.Load()
	fmt.Printf("updates=%d primary=%s secondary=%s\n", total,
		connectivityState(primary.current.Load()), connectivityState(secondary.current.Load()))
	if total != int64(len(addrs)*50) {
		panic("lost updates")
	}
}
