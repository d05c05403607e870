// Project: libp2p/go-libp2p (swarm + Notifiee), as remembered.
// Bug: the swarm notified registered notifiees (Disconnected) while holding
// s.conns.RLock(); the connection manager calls back ConnsToPeer(), which
// takes s.conns.RLock() again. A concurrent dial queues addConn's Lock() in
// between, so the recursive RLock blocks behind the writer: the swarm wedges.
package main

import (
	"sync"
	"time"
)

type PeerID string

type Conn struct {
	remote PeerID
	idle   bool
}

type Network interface {
	ConnsToPeer(p PeerID) []*Conn
}

// Notifiee is registered with the swarm and told about connection events.
type Notifiee interface {
	Connected(Network, *Conn)
	Disconnected(Network, *Conn)
}

type Swarm struct {
	conns struct {
		sync.RWMutex
		m map[PeerID][]*Conn
	}
	notifs struct {
		sync.RWMutex
		m map[Notifiee]struct{}
	}
}

func NewSwarm() *Swarm {
	s := &Swarm{}
	s.conns.m = make(map[PeerID][]*Conn)
	s.notifs.m = make(map[Notifiee]struct{})
	return s
}

func (s *Swarm) Notify(n Notifiee) {
	s.notifs.Lock()
	defer s.notifs.Unlock()
	s.notifs.m[n] = struct{}{}
}

func (s *Swarm) notifyAll(fn func(Notifiee)) {
	s.notifs.RLock()
	defer s.notifs.RUnlock()
	for n := range s.notifs.m {
		fn(n)
	}
}

func (s *Swarm) ConnsToPeer(p PeerID) []*Conn {
	s.conns.RLock()
	defer s.conns.RUnlock()
	return append([]*Conn(nil), s.conns.m[p]...)
}

func (s *Swarm) addConn(c *Conn) {
	s.conns.Lock()
	s.conns.m[c.remote] = append(s.conns.m[c.remote], c)
	s.conns.Unlock()
	s.notifyAll(func(n Notifiee) { n.Connected(s, c) })
}

func (s *Swarm) closeIdleConns() {
	s.conns.RLock()
	defer s.conns.RUnlock()
	for _, cs := range s.conns.m {
		for _, c := range cs {
			if c.idle {
				s.notifyAll(func(n Notifiee) { n.Disconnected(s, c) })
			}
		}
	}
}

type connManager struct{ lastSeen sync.Map }

func (cm *connManager) Connected(_ Network, c *Conn) { cm.lastSeen.Store(c.remote, time.Now()) }
func (cm *connManager) Disconnected(net Network, c *Conn) {
	if len(net.ConnsToPeer(c.remote)) <= 1 {
		cm.lastSeen.Delete(c.remote)
	}
}

func main() {
	s := NewSwarm()
	s.Notify(&connManager{})
	go func() {
		for {
			s.closeIdleConns()
		}
	}()
	go func() {
		for {
			s.addConn(&Conn{remote: "QmB", idle: true})
		}
	}()
	time.Sleep(time.Second)
}
