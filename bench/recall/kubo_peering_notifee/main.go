// Project: Kubo (go-ipfs), component: peering service (peering/peering.go).
// Bug (as remembered): PeeringService.AddPeer held ps.mu while it created the
// peerHandler and started it synchronously. Starting a handler whose peer is
// not connected dials it through the Host interface; on success the swarm
// walks its registered network.Notifiee list and calls Connected() for each,
// and the peering service's own notifee (netNotifee) takes ps.mu.RLock() to
// look up the handler -> `ipfs swarm peering add` (and Start with configured
// peers) hung. The fix starts the handler on its own goroutine
// (go handler.startIfDisconnected()) so no dial happens under ps.mu.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type PeerID string

type AddrInfo struct {
	ID    PeerID
	Addrs []string
}

type Connectedness int

const (
	NotConnected Connectedness = iota
	Connected
)

type Conn interface{ RemotePeer() PeerID }

type Notifiee interface {
	Connected(Network, Conn)
	Disconnected(Network, Conn)
}

type Network interface {
	Connectedness(PeerID) Connectedness
	Notify(Notifiee)
}

type Host interface {
	Network() Network
	Connect(ctx context.Context, pi AddrInfo) error
}

// ---- minimal swarm / basic host ----

type conn struct{ remote PeerID }

func (c *conn) RemotePeer() PeerID { return c.remote }

type swarm struct {
	mu        sync.Mutex
	conns     map[PeerID]*conn
	notifMu   sync.RWMutex
	notifiees []Notifiee
}

func (s *swarm) Connectedness(p PeerID) Connectedness {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns[p] != nil {
		return Connected
	}
	return NotConnected
}

func (s *swarm) Notify(n Notifiee) {
	s.notifMu.Lock()
	s.notifiees = append(s.notifiees, n)
	s.notifMu.Unlock()
}

func (s *swarm) notifyAll(f func(Notifiee)) {
	s.notifMu.RLock()
	defer s.notifMu.RUnlock()
	for _, n := range s.notifiees {
		f(n)
	}
}

func (s *swarm) dialPeer(ctx context.Context, p PeerID) error {
	c := &conn{remote: p}
	s.mu.Lock()
	s.conns[p] = c
	s.mu.Unlock()
	s.notifyAll(func(n Notifiee) { n.Connected(s, c) })
	return ctx.Err()
}

type basicHost struct{ network *swarm }

func (h *basicHost) Network() Network { return h.network }
func (h *basicHost) Connect(ctx context.Context, pi AddrInfo) error {
	return h.network.dialPeer(ctx, pi.ID)
}

// ---- peering service ----

type peerHandler struct {
	peer   PeerID
	host   Host
	ctx    context.Context
	mu     sync.Mutex
	addrs  []string
	active bool
}

func (ph *peerHandler) startIfDisconnected() {
	if ph.host.Network().Connectedness(ph.peer) != Connected {
		ph.reconnect()
	}
}

func (ph *peerHandler) reconnect() {
	ph.mu.Lock()
	addrs := append([]string(nil), ph.addrs...)
	ph.mu.Unlock()
	if err := ph.host.Connect(ph.ctx, AddrInfo{ID: ph.peer, Addrs: addrs}); err != nil {
		fmt.Println("peering: reconnect failed:", err)
	}
}

func (ph *peerHandler) stopIfConnected() {
	ph.mu.Lock()
	ph.active = true
	ph.mu.Unlock()
}

type PeeringService struct {
	host    Host
	ctx     context.Context
	mu      sync.RWMutex
	peers   map[PeerID]*peerHandler
	running bool
}

type netNotifee PeeringService

func (nn *netNotifee) Connected(_ Network, c Conn) {
	ps := (*PeeringService)(nn)
	ps.mu.RLock() // DEADLOCK HERE
	defer ps.mu.RUnlock()
	if handler, ok := ps.peers[c.RemotePeer()]; ok {
		handler.stopIfConnected()
	}
}

func (nn *netNotifee) Disconnected(Network, Conn) {}

func NewPeeringService(ctx context.Context, h Host) *PeeringService {
	return &PeeringService{host: h, ctx: ctx, peers: map[PeerID]*peerHandler{}}
}

func (ps *PeeringService) Start() {
	ps.mu.Lock()
	ps.running = true
	ps.mu.Unlock()
	ps.host.Network().Notify((*netNotifee)(ps))
}

func (ps *PeeringService) AddPeer(info AddrInfo) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if handler, ok := ps.peers[info.ID]; ok {
		handler.mu.Lock()
		handler.addrs = info.Addrs
		handler.mu.Unlock()
		return
	}
	handler := &peerHandler{peer: info.ID, host: ps.host, ctx: ps.ctx, addrs: info.Addrs}
	ps.peers[info.ID] = handler
	if ps.running {
		handler.startIfDisconnected()
	}
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	h := &basicHost{network: &swarm{conns: map[PeerID]*conn{}}}
	ps := NewPeeringService(ctx, h)
	ps.Start()
	for _, p := range []PeerID{"QmCloudflare", "QmPinata"} {
		go ps.AddPeer(AddrInfo{ID: p, Addrs: []string{"/dnsaddr/" + string(p)}})
	}
	<-ctx.Done()
}
