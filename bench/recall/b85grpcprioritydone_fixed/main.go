// Project: grpc-go (xds/internal/balancer/priority: balancer.go run/UpdateClientConnState/Close, balancer_child.go, balancer_priority.go), v1.62-v1.65, 2024 (fixed by PR #7417 "xds/balancer/priority: Unlock mutex before returning").
// Bug: the priority balancer's run goroutine takes b.mu for every queued child update and returns early when b.done has fired, but it returned without unlocking b.mu. A child update that is picked up while Close holds b.mu leaks the mutex once Close has fired done, so the next UpdateClientConnState from the parent blocks forever on b.mu.
package main

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

const (
	Connecting       = "CONNECTING"
	Ready            = "READY"
	TransientFailure = "TRANSIENT_FAILURE"
)

type balancerState struct{ ConnectivityState string }

// grpcsync.Event
type Event struct {
	once  sync.Once
	fired atomic.Bool
	c     chan struct{}
}

func NewEvent() *Event                 { return &Event{c: make(chan struct{})} }
func (e *Event) Fire()                 { e.once.Do(func() { e.fired.Store(true); close(e.c) }) }
func (e *Event) Done() <-chan struct{} { return e.c }
func (e *Event) HasFired() bool        { return e.fired.Load() }

// buffer.Unbounded (reduced to a large buffered channel).
type Unbounded struct{ c chan any }

func (b *Unbounded) Put(t any)       { b.c <- t }
func (b *Unbounded) Load()           {}
func (b *Unbounded) Get() <-chan any { return b.c }

// ClientConn is what the priority policy reports pickers to (cluster_resolver).
type ClientConn interface{ UpdateState(balancerState) }

// subBalancerWrapper is the balancergroup's ClientConn for one child policy.
type subBalancerWrapper struct {
	id  string
	agg *priorityBalancer
}

func (w *subBalancerWrapper) UpdateState(s balancerState) { w.agg.UpdateState(w.id, s) }

var DefaultPriorityInitTimeout = 50 * time.Millisecond

type timerWrapper struct {
	stopped bool
	timer   *time.Timer
}

type childBalancer struct {
	name      string
	parent    *priorityBalancer
	cc        ClientConn
	started   bool
	state     balancerState
	initTimer *timerWrapper
}

func (cb *childBalancer) start() {
	cb.started = true
	cb.cc = &subBalancerWrapper{id: cb.name, agg: cb.parent}
	cb.startInitTimer()
}

func (cb *childBalancer) startInitTimer() {
	timerW := &timerWrapper{}
	cb.initTimer = timerW
	timerW.timer = time.AfterFunc(DefaultPriorityInitTimeout, func() {
		cb.parent.mu.Lock()
		defer cb.parent.mu.Unlock()
		if timerW.stopped {
			return
		}
		cb.initTimer = nil
		// Re-sync the priority. This will switch to the next priority.
		cb.parent.syncPriority("")
	})
}

func (cb *childBalancer) stop() {
	if cb.initTimer != nil {
		cb.initTimer.timer.Stop()
		cb.initTimer.stopped = true
		cb.initTimer = nil
	}
	cb.started = false
}

type priorityBalancer struct {
	cc                       ClientConn
	done                     *Event
	childBalancerStateUpdate *Unbounded

	mu                   sync.Mutex
	childInUse           string
	priorities           []string
	children             map[string]*childBalancer
	inhibitPickerUpdates bool
}

type childBalancerState struct {
	name string
	s    balancerState
}

type resumePickerUpdates struct{ done chan struct{} }

func newPriorityBalancer(cc ClientConn) *priorityBalancer {
	b := &priorityBalancer{cc: cc, done: NewEvent(), children: map[string]*childBalancer{}, childBalancerStateUpdate: &Unbounded{c: make(chan any, 64)}}
	go b.run()
	return b
}

func (b *priorityBalancer) UpdateClientConnState(priorities []string) error {
	b.mu.Lock()
	for _, name := range priorities {
		if _, ok := b.children[name]; !ok {
			b.children[name] = &childBalancer{name: name, parent: b, state: balancerState{Connecting}}
		}
	}
	for name, oldChild := range b.children {
		if !slices.Contains(priorities, name) {
			oldChild.stop()
		}
	}
	b.priorities = priorities
	// Everything was removed by the update.
	if len(b.priorities) == 0 {
		b.childInUse = ""
		b.cc.UpdateState(balancerState{TransientFailure})
		b.mu.Unlock()
		return nil
	}
	b.inhibitPickerUpdates = true
	done := make(chan struct{})
	b.childBalancerStateUpdate.Put(resumePickerUpdates{done: done})
	b.mu.Unlock()
	<-done
	return nil
}

func (b *priorityBalancer) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done.Fire()
	for _, child := range b.children {
		child.stop()
	}
}

// UpdateState implements the balancergroup state aggregator.
func (b *priorityBalancer) UpdateState(childName string, state balancerState) {
	b.childBalancerStateUpdate.Put(childBalancerState{name: childName, s: state})
}

func (b *priorityBalancer) run() {
	for {
		select {
		case u := <-b.childBalancerStateUpdate.Get():
			b.childBalancerStateUpdate.Load()
			b.mu.Lock()
			if b.done.HasFired() {
				b.mu.Unlock()
				return
			}
			switch s := u.(type) {
			case childBalancerState:
				b.handleChildStateUpdate(s.name, s.s)
			case resumePickerUpdates:
				b.inhibitPickerUpdates = false
				b.syncPriority("")
				close(s.done)
			}
			b.mu.Unlock()
		case <-b.done.Done():
			return
		}
	}
}

func (b *priorityBalancer) handleChildStateUpdate(name string, s balancerState) {
	if child, ok := b.children[name]; ok && child.started {
		child.state = s
		b.syncPriority(name)
	}
}

// syncPriority picks the highest priority that is usable; caller holds b.mu.
func (b *priorityBalancer) syncPriority(childUpdating string) {
	if b.inhibitPickerUpdates {
		return
	}
	for p, name := range b.priorities {
		child := b.children[name]
		if !child.started || child.state.ConnectivityState == Ready ||
			(child.state.ConnectivityState == Connecting && child.initTimer != nil) ||
			p == len(b.priorities)-1 {
			if b.childInUse != child.name || child.name == childUpdating {
				b.childInUse = child.name
				if !child.started {
					child.start()
				}
				b.cc.UpdateState(child.state)
			}
			return
		}
	}
}

// testClientConn stands in for the cluster_resolver's ClientConn.
type testClientConn struct{ NewStateCh chan string }

func (t *testClientConn) UpdateState(s balancerState) { t.NewStateCh <- s.ConnectivityState }

func main() {
	cc := &testClientConn{NewStateCh: make(chan string, 1)}
	b := newPriorityBalancer(cc)

	// EDS update with two priorities; p0 starts and is connecting.
	b.UpdateClientConnState([]string{"p0", "p1"})
	// p0 does not connect within the init timeout: the timer switches to p1
	// and pushes the new picker to the (busy) parent while holding b.mu.
	time.Sleep(100 * time.Millisecond)
	// The cluster is removed from the CDS config: the parent closes us.
	go b.Close()
	time.Sleep(20 * time.Millisecond)
	// p0's subchannel fails at the same time.
	go b.children["p0"].cc.UpdateState(balancerState{TransientFailure})
	time.Sleep(20 * time.Millisecond)
	go func() {
		for range cc.NewStateCh {
		}
	}()
	time.Sleep(20 * time.Millisecond)
	// A late EDS update (all priorities removed) still reaches the policy.
	b.UpdateClientConnState(nil)
	fmt.Println("late update handled")
}
