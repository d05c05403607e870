// Package main models grpc-go's base balancer (balancer/base/balancer.go):
// SubConn state updates are aggregated into a connectivity state for the
// ClientConn. The state listener defaults to the balancer itself (which logs
// the last reported state under its own lock) and can be replaced by the
// ClientConn wrapper. The listener is always invoked after b.mu is released,
// so the self-listener re-acquiring b.mu is safe.
package main

import (
	"fmt"
	"sync"
)

type connectivityState int

const (
	idle connectivityState = iota
	connecting
	ready
	transientFailure
)

func (s connectivityState) String() string {
	return [...]string{"IDLE", "CONNECTING", "READY", "TRANSIENT_FAILURE"}[s]
}

type stateListener interface {
	UpdateState(s connectivityState)
}

type baseBalancer struct {
	mu           sync.Mutex
	scStates     map[string]connectivityState
	listener     stateListener
	lastReported connectivityState
	reports      int
}

func newBaseBalancer() *baseBalancer {
	b := &baseBalancer{scStates: make(map[string]connectivityState)}
	b.listener = b // default: balancer records its own state
	return b
}

// UpdateState is the default listener implementation.
func (b *baseBalancer) UpdateState(s connectivityState) {
	b.mu.Lock()
	b.lastReported = s
	b.reports++
	b.mu.Unlock()
}

func (b *baseBalancer) SetListener(l stateListener) {
	b.mu.Lock()
	b.listener = l
	b.mu.Unlock()
}

func (b *baseBalancer) aggregateLocked() connectivityState {
	var nConnecting, nFailure int
	for _, st := range b.scStates {
		switch st {
		case ready:
			return ready
		case connecting, idle:
			nConnecting++
		case transientFailure:
			nFailure++
		}
	}
	if nConnecting > 0 {
		return connecting
	}
	return transientFailure
}

func (b *baseBalancer) UpdateSubConnState(addr string, st connectivityState) {
	b.mu.Lock()
	b.scStates[addr] = st
	agg := b.aggregateLocked()
	l := b.listener
	b.mu.Unlock()

	l.UpdateState(agg) // outside b.mu
}

// ccWrapper stands in for balancer.ClientConn and replaces the listener.
type ccWrapper struct {
	mu     sync.Mutex
	states []connectivityState
	b      *baseBalancer
}

func (cc *ccWrapper) UpdateState(s connectivityState) {
	cc.mu.Lock()
	cc.states = append(cc.states, s)
	cc.mu.Unlock()
}

func main() {
	b := newBaseBalancer()
	addrs := []string{"10.0.0.1:443", "10.0.0.2:443", "10.0.0.3:443"}

	var wg sync.WaitGroup
	run := func() {
		for i, a := range addrs {
			wg.Add(1)
			go func(i int, a string) {
				defer wg.Done()
				seq := []connectivityState{connecting, transientFailure, connecting, ready}
				for _, st := range seq {
					b.UpdateSubConnState(a, st)
				}
			}(i, a)
		}
	}

	run() // default self-listener
	wg.Wait()
	b.mu.Lock()
	fmt.Println("self listener:", b.lastReported, "reports:", b.reports)
	if b.lastReported != ready {
		b.mu.Unlock()
		panic("expected READY")
	}
	b.mu.Unlock()

	cc := &ccWrapper{b: b}
	b.SetListener(cc)
	run() // replaced listener, concurrent with more updates
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.UpdateSubConnState("10.0.0.4:443", idle)
	}()
	wg.Wait()

	cc.mu.Lock()
	defer cc.mu.Unlock()
	fmt.Println("cc listener got", len(cc.states), "updates, last:", cc.states[len(cc.states)-1])
	if len(cc.states) != 13 {
		panic("missing updates")
	}
}
