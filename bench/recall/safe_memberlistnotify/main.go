// Modelled on hashicorp/memberlist + serf: membership changes update the
// node map under m.nodeLock and build the delegate notifications as func
// values, but the notifications are only sent to the event dispatcher
// (queue size from Config.EventQueueSize) after the lock is released.
// Callbacks are therefore free to call back into the Memberlist (NumMembers
// takes nodeLock) without any deadlock risk.
package main

import (
	"fmt"
	"sync"
)

type Config struct {
	EventQueueSize int
}

type Node struct{ Name, Addr string }

type EventDelegate struct {
	NotifyJoin  func(*Node)
	NotifyLeave func(*Node)
}

type Memberlist struct {
	nodeLock sync.RWMutex
	nodes    map[string]*Node
	events   EventDelegate

	eventCh chan func()
	done    chan struct{}
}

func Create(cfg Config, ev EventDelegate) *Memberlist {
	m := &Memberlist{nodes: map[string]*Node{}, events: ev,
		eventCh: make(chan func(), cfg.EventQueueSize), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for fn := range m.eventCh {
			fn()
		}
	}()
	return m
}

func (m *Memberlist) aliveNode(name, addr string) {
	var notify func()
	m.nodeLock.Lock()
	if _, ok := m.nodes[name]; !ok {
		n := &Node{Name: name, Addr: addr}
		m.nodes[name] = n
		if m.events.NotifyJoin != nil {
			notify = func() { m.events.NotifyJoin(n) }
		}
	}
	m.nodeLock.Unlock()
	if notify != nil {
		m.eventCh <- notify // sent after unlocking
	}
}

func (m *Memberlist) deadNode(name string) {
	var notify func()
	m.nodeLock.Lock()
	if n, ok := m.nodes[name]; ok {
		delete(m.nodes, name)
		if m.events.NotifyLeave != nil {
			notify = func() { m.events.NotifyLeave(n) }
		}
	}
	m.nodeLock.Unlock()
	if notify != nil {
		m.eventCh <- notify
	}
}

func (m *Memberlist) NumMembers() int {
	m.nodeLock.RLock()
	defer m.nodeLock.RUnlock()
	return len(m.nodes)
}

func (m *Memberlist) Shutdown() {
	close(m.eventCh)
	<-m.done
}

func main() {
	var m *Memberlist
	var joins, leaves, maxSeen int // only touched by the dispatcher goroutine
	ev := EventDelegate{
		NotifyJoin: func(n *Node) {
			joins++
			if c := m.NumMembers(); c > maxSeen { // re-enters nodeLock: safe
				maxSeen = c
			}
		},
		NotifyLeave: func(n *Node) { leaves++; _ = m.NumMembers() },
	}
	m = Create(Config{EventQueueSize: 1}, ev)

	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				name := fmt.Sprintf("node-%d-%d", g, i%7)
				m.aliveNode(name, "10.0.0.1:7946")
				if i%3 == 0 {
					m.deadNode(name)
				}
			}
		}(g)
	}
	wg.Wait()
	m.Shutdown()
	fmt.Printf("joins=%d leaves=%d max=%d members=%d\n", joins, leaves, maxSeen, m.NumMembers())
}
