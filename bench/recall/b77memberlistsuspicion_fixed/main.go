// Project: hashicorp/memberlist (suspicion.go, state.go), 2016-2017 after the Lifeguard suspicion changes (approximate).
// Bug: suspectNode holds m.nodeLock while it calls suspicion.Confirm for an already suspect node; when the new confirmation pushes the remaining suspicion time below zero, Confirm stops the timer and invokes the stored timeout callback directly, and that callback (built in suspectNode) takes m.nodeLock again to mark the node dead, so the packet handler deadlocks on its own lock. The fix runs the timeout callback in a new goroutine.
package main

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

type NodeStateType int

const (
	StateAlive NodeStateType = iota
	StateSuspect
	StateDead
)

type Node struct{ Name string }
type nodeState struct {
	Node
	Incarnation uint32
	State       NodeStateType
	StateChange time.Time
}

type (
	suspect struct {
		Incarnation uint32
		Node, From  string
	}
	dead struct {
		Incarnation uint32
		Node, From  string
	}
)

// suspicion manages the suspect timer for a node and provides an interface
// to accelerate the timeout as we get more independent confirmations.
type suspicion struct {
	n, k          int32
	min, max      time.Duration
	start         time.Time
	timer         *time.Timer
	timeoutFn     func()
	confirmations map[string]struct{}
}

func newSuspicion(from string, k int, min, max time.Duration, fn func(int)) *suspicion {
	s := &suspicion{k: int32(k), min: min, max: max, confirmations: map[string]struct{}{from: {}}}
	s.timeoutFn = func() { fn(int(atomic.LoadInt32(&s.n))) }
	timeout := max
	if k < 1 {
		timeout = min
	}
	s.timer = time.AfterFunc(timeout, s.timeoutFn)
	s.start = time.Now()
	return s
}

func remainingSuspicionTime(n, k int32, elapsed, min, max time.Duration) time.Duration {
	frac := math.Log(float64(n)+1.0) / math.Log(float64(k)+1.0)
	raw := max.Seconds() - frac*(max.Seconds()-min.Seconds())
	timeout := time.Duration(math.Floor(1000.0*raw)) * time.Millisecond
	if timeout < min {
		timeout = min
	}
	return timeout - elapsed
}

// Confirm registers that a possibly new peer has also determined the given
// node is suspect. If the timeout becomes negative *and* we can cleanly stop
// the timer then we will call the timeout function directly from here.
func (s *suspicion) Confirm(from string) bool {
	if atomic.LoadInt32(&s.n) >= s.k {
		return false
	}
	if _, ok := s.confirmations[from]; ok {
		return false
	}
	s.confirmations[from] = struct{}{}

	n := atomic.AddInt32(&s.n, 1)
	elapsed := time.Since(s.start)
	remaining := remainingSuspicionTime(n, s.k, elapsed, s.min, s.max)
	if s.timer.Stop() {
		if remaining > 0 {
			s.timer.Reset(remaining)
		} else {
			go s.timeoutFn()
		}
	}
	return true
}

type EventDelegate interface{ NotifyLeave(*Node) }

type ChannelEventDelegate struct{ Ch chan string }

func (c *ChannelEventDelegate) NotifyLeave(n *Node) { c.Ch <- "leave " + n.Name }

type Memberlist struct {
	name       string
	nodeLock   sync.RWMutex
	nodeMap    map[string]*nodeState
	nodeTimers map[string]*suspicion
	events     EventDelegate
	broadcasts []string
	suspMin    time.Duration // config.SuspicionMult-derived bounds
	suspMax    time.Duration
	suspK      int
}

func (m *Memberlist) encodeAndBroadcast(node, msg string) {
	m.broadcasts = append(m.broadcasts, msg+" "+node)
}

// suspectNode is invoked by the network layer when we get a message about a suspect node.
func (m *Memberlist) suspectNode(s *suspect) {
	m.nodeLock.Lock()
	defer m.nodeLock.Unlock()
	state, ok := m.nodeMap[s.Node]
	if !ok || s.Incarnation < state.Incarnation {
		return
	}

	// See if there's a suspicion timer we can confirm.
	if timer, ok := m.nodeTimers[s.Node]; ok {
		if timer.Confirm(s.From) {
			m.encodeAndBroadcast(s.Node, "suspect")
		}
		return
	}
	if state.State != StateAlive {
		return
	}

	m.encodeAndBroadcast(s.Node, "suspect")
	state.Incarnation = s.Incarnation
	state.State = StateSuspect
	changeTime := time.Now()
	state.StateChange = changeTime

	fn := func(numConfirmations int) {
		var d *dead
		m.nodeLock.Lock()
		state, ok := m.nodeMap[s.Node]
		timeout := ok && state.State == StateSuspect && state.StateChange == changeTime
		if timeout {
			d = &dead{Incarnation: state.Incarnation, Node: state.Name, From: m.name}
		}
		m.nodeLock.Unlock()

		if timeout {
			m.deadNode(d)
		}
	}
	m.nodeTimers[s.Node] = newSuspicion(s.From, m.suspK, m.suspMin, m.suspMax, fn)
}

// deadNode is invoked by the network layer when we get a message about a dead node.
func (m *Memberlist) deadNode(d *dead) {
	m.nodeLock.Lock()
	defer m.nodeLock.Unlock()
	state, ok := m.nodeMap[d.Node]
	if !ok || d.Incarnation < state.Incarnation || state.State == StateDead {
		return
	}
	delete(m.nodeTimers, d.Node)
	m.encodeAndBroadcast(d.Node, "dead")
	state.State = StateDead
	state.StateChange = time.Now()
	if m.events != nil {
		m.events.NotifyLeave(&state.Node)
	}
}

func main() {
	events := &ChannelEventDelegate{Ch: make(chan string, 4)}
	m := &Memberlist{name: "node-a", nodeMap: map[string]*nodeState{}, nodeTimers: map[string]*suspicion{},
		events: events, suspMin: 20 * time.Millisecond, suspMax: 5 * time.Second, suspK: 1}
	m.nodeMap["node-b"] = &nodeState{Node: Node{Name: "node-b"}, Incarnation: 1}
	m.suspectNode(&suspect{Incarnation: 1, Node: "node-b", From: "node-c"})
	time.Sleep(50 * time.Millisecond) // past the minimum suspicion time
	m.suspectNode(&suspect{Incarnation: 1, Node: "node-b", From: "node-d"})

	select {
	case ev := <-events.Ch:
		fmt.Println(ev, m.broadcasts)
	case <-time.After(time.Second):
		fmt.Println("node-b never declared dead")
	}
}
