// Package network is a minimal swarm modeled on go-libp2p's network.Network.
package network

import "sync"

// Notifiee is told about connection events (like libp2p network.Notifiee).
type Notifiee interface {
	Connected(peer string)
	Disconnected(peer string)
}

// Network tracks connected peers.
type Network struct {
	mu        sync.Mutex
	peers     map[string]bool
	notifiees []Notifiee
}

// New returns an empty network.
func New() *Network { return &Network{peers: make(map[string]bool)} }

// Notify registers nf.
func (n *Network) Notify(nf Notifiee) {
	n.mu.Lock()
	n.notifiees = append(n.notifiees, nf)
	n.mu.Unlock()
}

// Connect adds p and notifies every notifiee while holding n.mu.
func (n *Network) Connect(p string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.peers[p] = true
	for _, nf := range n.notifiees {
		nf.Connected(p)
	}
}

// ClosePeer removes p and notifies every notifiee while holding n.mu.
func (n *Network) ClosePeer(p string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.peers, p)
	for _, nf := range n.notifiees {
		nf.Disconnected(p)
	}
}

// Peers lists connected peers.
func (n *Network) Peers() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, 0, len(n.peers))
	for p := range n.peers {
		out = append(out, p)
	}
	return out
}
