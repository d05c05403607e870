// Project: libp2p/go-libp2p v0.28.0 (p2p/net/swarm/swarm.go: Swarm.addConn, Swarm.ConnsToPeer; p2p/host/eventbus), with go-libp2p-kad-dht's event subscriber
// Issue: libp2p/go-libp2p#2373 "fix: in the swarm move Connectedness emit after releasing conns" (released in v0.28.1)
// Swarm.addConn write-locks s.conns (line 78) to record a peer's first connection and, still
// holding it, emits EvtPeerConnectednessChanged on the event bus (line 83). The bus delivers
// synchronously: Emit blocks until every subscriber's buffered channel has room (line 51).
// go-libp2p-kad-dht subscribes to EvtPeerIdentificationCompleted and
// EvtPeerConnectednessChanged on one subscription; for an identification event it asks the
// swarm for the peer's connections, and ConnsToPeer read-locks s.conns (line 90). When the dht's
// channel is full, addConn waits for the dht to read, the dht waits for addConn's write lock,
// and the swarm stops accepting and closing connections.
// main() lets identify fill the dht's subscription while the dht is still handling an
// earlier event, then a new peer connects.
package main

import (
	"fmt"
	"sync"
	"time"
)

type peerID string

// EvtPeerConnectednessChanged is emitted on a peer's first connection and last disconnection.
type EvtPeerConnectednessChanged struct {
	Peer          peerID
	Connectedness string
}

// EvtPeerIdentificationCompleted is emitted by identify.
type EvtPeerIdentificationCompleted struct{ Peer peerID }

// basicBus is the eventbus: every subscription is a buffered channel.
type basicBus struct {
	mu    sync.Mutex
	sinks []chan interface{}
}

func (b *basicBus) Subscribe(bufSize int) <-chan interface{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	ch := make(chan interface{}, bufSize)
	b.sinks = append(b.sinks, ch)
	return ch
}

func (b *basicBus) Emit(evt interface{}) {
	b.mu.Lock()
	sinks := append([]chan interface{}(nil), b.sinks...)
	b.mu.Unlock()
	for _, sink := range sinks {
		sink <- evt
	}
}

func (b *basicBus) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, sink := range b.sinks {
		close(sink)
	}
	b.sinks = nil
}

// Conn is a swarm connection.
type Conn struct{ remote peerID }

// Swarm is the libp2p swarm.
type Swarm struct {
	conns struct {
		sync.RWMutex
		m map[peerID][]*Conn
	}
	emitter *basicBus
}

func (s *Swarm) addConn(p peerID) *Conn {
	c := &Conn{remote: p}
	s.conns.Lock()
	defer s.conns.Unlock()
	isFirstConnection := len(s.conns.m[p]) == 0
	s.conns.m[p] = append(s.conns.m[p], c)
	if isFirstConnection {
		s.emitter.Emit(EvtPeerConnectednessChanged{Peer: p, Connectedness: "Connected"})
	}
	return c
}

// ConnsToPeer returns all the live connections to peer.
func (s *Swarm) ConnsToPeer(p peerID) []*Conn {
	s.conns.RLock()
	defer s.conns.RUnlock()
	return append([]*Conn(nil), s.conns.m[p]...)
}

// dhtSubscriber is kad-dht's subscriber_notifee loop.
func dhtSubscriber(s *Swarm, events <-chan interface{}, done chan<- struct{}) {
	defer close(done)
	for e := range events {
		switch evt := e.(type) {
		case EvtPeerIdentificationCompleted:
			time.Sleep(50 * time.Millisecond) // validRTPeer: peerstore protocol lookups
			conns := s.ConnsToPeer(evt.Peer)
			fmt.Printf("dht: %s identified, %d conns\n", evt.Peer, len(conns))
		case EvtPeerConnectednessChanged:
			fmt.Printf("dht: %s %s\n", evt.Peer, evt.Connectedness)
		}
	}
}

func main() {
	s := &Swarm{emitter: &basicBus{}}
	s.conns.m = map[peerID][]*Conn{}
	sub := s.emitter.Subscribe(4)
	dhtDone := make(chan struct{})
	go dhtSubscriber(s, sub, dhtDone)

	// identify finishes for a burst of peers: the first is taken by the dht,
	// the next four fill its subscription buffer.
	for _, p := range []peerID{"QmA", "QmB", "QmC", "QmD", "QmE"} {
		s.emitter.Emit(EvtPeerIdentificationCompleted{Peer: p})
		time.Sleep(time.Millisecond)
	}

	connected := make(chan struct{})
	go func() { // an inbound connection from a new peer
		s.addConn("QmNew")
		close(connected)
	}()

	<-connected
	s.emitter.Close()
	<-dhtDone
	fmt.Println("swarm idle")
}
