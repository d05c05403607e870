package teststaged

import "sync"

// A production cycle closed only through a test's fake behind a
// production interface exists in test builds only (nats-server's raft
// sends through mockTransport, which delivers to another node in process):
// a take reached through a function of a _test.go file is a test edge.

// Transport carries a node's messages.
type Transport interface{ Publish(msg string) }

type Node struct {
	mu  sync.Mutex
	t   Transport
	log []string
}

// Send publishes under the node's lock.
func (n *Node) Send(msg string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.t.Publish(msg)
}

// Machine applies entries under its lock, then records them on its node.
type Machine struct {
	mu   sync.Mutex
	node *Node
}

func (m *Machine) Apply(e string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.node.mu.Lock()
	m.node.log = append(m.node.log, e)
	m.node.mu.Unlock()
}

// netTransport writes to a connection. With the test's fake below it,
// Node.mu -> Machine.mu exists in test builds only. Silent.
type netTransport struct{ out chan string }

func (t *netTransport) Publish(msg string) { t.out <- msg }

func NewNode(out chan string) *Node { return &Node{t: &netTransport{out: out}} }

// The same shape where production code delivers in process: reported.
type Peer struct {
	mu  sync.Mutex
	t   Transport
	log []string
}

func (p *Peer) Send(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.t.Publish(msg)
}

type Applier struct {
	mu   sync.Mutex
	peer *Peer
}

func (a *Applier) Apply(e string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.peer.mu.Lock() // want `lock order inversion: Peer.mu then Applier.mu in Peer.Send .* but Applier.mu then Peer.mu in Applier.Apply .*\[lock-order\]`
	a.peer.log = append(a.peer.log, e)
	a.peer.mu.Unlock()
}

type loopback struct{ to *Applier }

func (l *loopback) Publish(msg string) { l.to.Apply(msg) }

func NewPeer(a *Applier) *Peer { return &Peer{t: &loopback{to: a}} }
