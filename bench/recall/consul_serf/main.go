// Project: hashicorp/consul (serf + memberlist), as remembered.
// Bug: memberlist invoked its EventDelegate (NotifyJoin) while still holding
// nodeLock; serf's delegate takes serf.memberLock. Concurrently serf's reaper
// held memberLock and asked memberlist for the cluster size (NumMembers ->
// nodeLock.RLock). AB-BA between memberlist.nodeLock and serf.memberLock.
// Fix: memberlist queues the notification and calls the delegate after
// releasing nodeLock.
package main

import (
	"fmt"
	"sync"
	"time"
)

type Node struct {
	Name string
	Addr string
}

// EventDelegate is notified by memberlist of membership changes.
type EventDelegate interface {
	NotifyJoin(n *Node)
	NotifyLeave(n *Node)
}

type Memberlist struct {
	nodeLock sync.RWMutex
	nodes    []*Node
	nodeMap  map[string]*Node
	events   EventDelegate
}

func newMemberlist(ev EventDelegate) *Memberlist {
	return &Memberlist{nodeMap: make(map[string]*Node), events: ev}
}

// aliveNode handles an alive message received via gossip.
func (m *Memberlist) aliveNode(n *Node) {
	m.nodeLock.Lock()
	defer m.nodeLock.Unlock()
	if _, ok := m.nodeMap[n.Name]; ok {
		return
	}
	m.nodeMap[n.Name] = n
	m.nodes = append(m.nodes, n)
	if m.events != nil {
		m.events.NotifyJoin(n)
	}
}

func (m *Memberlist) NumMembers() int {
	m.nodeLock.RLock()
	defer m.nodeLock.RUnlock()
	return len(m.nodes)
}

type Serf struct {
	memberLock sync.RWMutex
	members    map[string]*Node
	memberlist *Memberlist
	eventCh    chan string
}

func (s *Serf) NotifyJoin(n *Node)  { s.handleNodeJoin(n) }
func (s *Serf) NotifyLeave(n *Node) {}

func (s *Serf) handleNodeJoin(n *Node) {
	s.memberLock.Lock()
	defer s.memberLock.Unlock()
	s.members[n.Name] = n
	select {
	case s.eventCh <- "member-join " + n.Name:
	default:
	}
}

// reap trims failed members; it consults memberlist while holding memberLock.
func (s *Serf) reap() {
	s.memberLock.Lock()
	defer s.memberLock.Unlock()
	if len(s.members) > s.estimateClusterSize() {
		for name := range s.members {
			delete(s.members, name)
			break
		}
	}
}

func (s *Serf) estimateClusterSize() int {
	return s.memberlist.NumMembers()
}

func main() {
	s := &Serf{members: make(map[string]*Node), eventCh: make(chan string, 16)}
	s.memberlist = newMemberlist(s)
	go func() {
		for i := 0; ; i++ {
			s.memberlist.aliveNode(&Node{Name: fmt.Sprint("node-", i)})
		}
	}()
	go func() {
		for {
			s.reap()
			time.Sleep(time.Millisecond)
		}
	}()
	time.Sleep(time.Second)
}
