// Project: go-libp2p (p2p/protocol/circuitv2/relay/relay.go, p2p/net/swarm/swarm.go, p2p/host/basic), v0.26
// Issue: libp2p/go-libp2p#2167 "autorelay: deadlock in tests" (regression from PR #2164), fixed by PR #2171 "relay: fix deadlock when closing"
// Fixed twin of b34libp2prelayclose, with the fix of PR #2171: Relay.Close sets r.closed under r.mx and
// releases it before RemoveStreamHandler and host.Network().StopNotify; it takes r.mx again only to untag the
// reserved peers. The disconnect notification can now take r.mx while the swarm holds the notifs read lock.
package main

import (
	"fmt"
	"sync"
	"time"
)

type ID string

type Connectedness int

const (
	NotConnected Connectedness = iota
	Connected
)

// Network is the swarm as seen by notifiees and services.
type Network interface {
	Notify(Notifiee)
	StopNotify(Notifiee)
	Connectedness(ID) Connectedness
}

// Notifiee is an interface for an object wishing to receive notifications from a Network.
type Notifiee interface {
	Connected(Network, *Conn)
	Disconnected(Network, *Conn)
}

// NotifyBundle implements Notifiee by calling any of the functions set on it.
type NotifyBundle struct {
	ConnectedF    func(Network, *Conn)
	DisconnectedF func(Network, *Conn)
}

func (nb *NotifyBundle) Connected(n Network, c *Conn) {
	if nb.ConnectedF != nil {
		nb.ConnectedF(n, c)
	}
}

func (nb *NotifyBundle) Disconnected(n Network, c *Conn) {
	if nb.DisconnectedF != nil {
		nb.DisconnectedF(n, c)
	}
}

type Conn struct {
	swarm  *Swarm
	remote ID
}

func (c *Conn) RemotePeer() ID { return c.remote }

// Swarm is a connection muxer.
type Swarm struct {
	conns struct {
		sync.RWMutex
		m map[ID][]*Conn
	}
	notifs struct {
		sync.RWMutex
		m map[Notifiee]struct{}
	}
}

func NewSwarm() *Swarm {
	s := &Swarm{}
	s.conns.m = make(map[ID][]*Conn)
	s.notifs.m = make(map[Notifiee]struct{})
	return s
}

func (s *Swarm) Notify(f Notifiee) {
	s.notifs.Lock()
	s.notifs.m[f] = struct{}{}
	s.notifs.Unlock()
}

// StopNotify unregisters Notifiee from receiving signals
func (s *Swarm) StopNotify(f Notifiee) {
	s.notifs.Lock()
	delete(s.notifs.m, f)
	s.notifs.Unlock()
}

func (s *Swarm) notifyAll(notify func(Notifiee)) {
	s.notifs.RLock()
	for f := range s.notifs.m {
		notify(f)
	}
	s.notifs.RUnlock()
}

func (s *Swarm) Connectedness(p ID) Connectedness {
	s.conns.RLock()
	defer s.conns.RUnlock()
	if len(s.conns.m[p]) > 0 {
		return Connected
	}
	return NotConnected
}

func (s *Swarm) addConn(p ID) *Conn {
	c := &Conn{swarm: s, remote: p}
	s.conns.Lock()
	s.conns.m[p] = append(s.conns.m[p], c)
	s.conns.Unlock()
	s.notifyAll(func(f Notifiee) { f.Connected(s, c) })
	return c
}

// doClose removes the connection and fires the Disconnected notifications.
func (c *Conn) doClose() {
	s := c.swarm
	s.conns.Lock()
	cs := s.conns.m[c.remote]
	for i, o := range cs {
		if o == c {
			s.conns.m[c.remote] = append(cs[:i], cs[i+1:]...)
			break
		}
	}
	s.conns.Unlock()
	s.notifyAll(func(f Notifiee) { f.Disconnected(s, c) })
}

// BasicHost, with the event bus emitter of EvtLocalProtocolsUpdated.
type BasicHost struct {
	network   *Swarm
	mux       sync.Mutex
	handlers  map[string]func()
	protoSink chan []string // subscription of the identify service
}

func (h *BasicHost) Network() Network { return h.network }

func (h *BasicHost) SetStreamHandler(pid string, handler func()) {
	h.mux.Lock()
	h.handlers[pid] = handler
	h.mux.Unlock()
	h.protoSink <- []string{"+" + pid} // emitters.evtLocalProtocolsUpdated.Emit
}

func (h *BasicHost) RemoveStreamHandler(pid string) {
	h.mux.Lock()
	delete(h.handlers, pid)
	h.mux.Unlock()
	h.protoSink <- []string{"-" + pid} // emitters.evtLocalProtocolsUpdated.Emit
}

// identify service: pushes protocol updates to every connected peer.
func identifyLoop(updates <-chan []string) {
	for u := range updates {
		// sendPushes: open a stream to each peer and write the identify push
		time.Sleep(200 * time.Millisecond)
		fmt.Println("identify: pushed protocol update", u)
	}
}

// Relay is the (limited) relay service object.
type Relay struct {
	host     *BasicHost
	notifiee Notifiee
	cancel   func()

	mx     sync.Mutex
	rsvp   map[ID]time.Time
	conns  map[ID]int
	closed bool
}

func New(h *BasicHost) *Relay {
	r := &Relay{host: h, cancel: func() {}, rsvp: make(map[ID]time.Time), conns: make(map[ID]int)}
	h.SetStreamHandler("/libp2p/circuit/relay/0.2.0/hop", func() {})
	r.notifiee = &NotifyBundle{DisconnectedF: r.disconnected}
	h.Network().Notify(r.notifiee)
	return r
}

func (r *Relay) Close() error {
	r.mx.Lock()
	if !r.closed {
		r.closed = true
		r.mx.Unlock()

		r.host.RemoveStreamHandler("/libp2p/circuit/relay/0.2.0/hop")
		r.host.Network().StopNotify(r.notifiee)
		r.cancel()

		r.mx.Lock()
		for p := range r.rsvp {
			fmt.Println("relay: untag", p)
		}
		r.mx.Unlock()
		return nil
	}
	r.mx.Unlock()
	return nil
}

func (r *Relay) handleReserve(p ID) {
	r.mx.Lock()
	defer r.mx.Unlock()
	if r.closed {
		return
	}
	r.rsvp[p] = time.Now().Add(time.Hour)
}

func (r *Relay) disconnected(n Network, c *Conn) {
	p := c.RemotePeer()
	if n.Connectedness(p) == Connected {
		return
	}

	r.mx.Lock()
	_, ok := r.rsvp[p]
	if ok {
		delete(r.rsvp, p)
	}
	r.mx.Unlock()
	fmt.Println("relay: dropped reservation of", p, ok)
}

func main() {
	h := &BasicHost{network: NewSwarm(), handlers: make(map[string]func()), protoSink: make(chan []string)}
	go identifyLoop(h.protoSink)

	r := New(h) // identify starts pushing the "hop added" update (200ms)
	conn := h.network.addConn("QmPeerA")
	r.handleReserve("QmPeerA")

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		r.Close()
	}()
	time.Sleep(60 * time.Millisecond)
	go func() {
		defer wg.Done()
		conn.doClose() // the reserved peer disconnects
	}()
	wg.Wait()
	fmt.Println("relay closed")
}
