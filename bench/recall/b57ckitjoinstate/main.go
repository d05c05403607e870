// Project: grafana/ckit (cluster toolkit used by Grafana Agent Flow clustering), May 2023.
// Files/functions: node.go (Node.Start, Node.CurrentState, nodeDelegate.MergeRemoteState,
// nodeDelegate.NotifyJoin), hashicorp/memberlist (Memberlist.Join, pushPullNode,
// mergeRemoteState, mergeState/aliveNode) driven through the memberlist.Delegate and
// memberlist.EventDelegate interfaces.
// References: grafana/ckit PR #12 "node: separate mutexes for peer state and shutdown
// conditions" (merged 2023-05-16; first attempt in PR #8). The same hang was reported
// by users in grafana/agent issue #3919 "Clustering Mode: deadlock during initialization".
//
// Node.Start held n.stateMut (a sync.RWMutex that guarded both the node's local state and
// the started/stopped bookkeeping) for its whole body, including the call to
// n.ml.Join(peers). Join performs a synchronous push/pull with a peer, and memberlist
// feeds the remote peer's user state back into the node through the Delegate interface:
// Join -> pushPullNode -> mergeRemoteState -> Delegate.MergeRemoteState. Commit 4edf906
// taught MergeRemoteState to correct stale messages about the local node (left behind by a
// previous instance of the same process): when the remote peer has a newer message about
// us, MergeRemoteState builds a replacement with NewState: nd.CurrentState(), and
// CurrentState takes n.stateMut.RLock(). On the same goroutine that still holds
// n.stateMut.Lock() from Start, so a restarted agent could hang forever in Start.
//
// The fix introduced a separate shutdownMut for runCancel/stopped; Start takes only that
// mutex, so Join runs without n.stateMut held and CurrentState can take the read lock.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

var ErrStopped = errors.New("node stopped")

// ---- internal/lamport ----

type Time uint64

type Clock struct{ t atomic.Uint64 }

func (c *Clock) Now() Time      { return Time(c.t.Load()) }
func (c *Clock) Tick() Time     { return Time(c.t.Add(1)) }
func (c *Clock) Observe(t Time) { c.t.Store(max(c.t.Load(), uint64(t)+1)) }

// ---- peer / messages ----

type State int

const (
	StateViewer State = iota
	StateParticipant
)

type Peer struct {
	Name  string
	Self  bool
	State State
}

type StateMessage struct {
	NodeName string
	NewState State
	Time     Time
}

// ---- hashicorp/memberlist (the parts ckit drives) ----

type MLNode struct{ Name string }

type Delegate interface {
	LocalState(join bool) []byte
	MergeRemoteState(buf []byte, join bool)
}

type EventDelegate interface {
	NotifyJoin(node *MLNode)
}

// Transport performs the TCP push/pull with a remote member.
type Transport interface {
	PushPull(addr string, local []MLNode, userState []byte) ([]MLNode, []byte, error)
}

type MLConfig struct {
	Name      string
	Delegate  Delegate
	Events    EventDelegate
	Transport Transport
}

type Memberlist struct {
	config  *MLConfig
	nodeMap map[string]*MLNode
}

func Create(conf *MLConfig) *Memberlist {
	m := &Memberlist{config: conf, nodeMap: map[string]*MLNode{}}
	m.aliveNode(MLNode{Name: conf.Name})
	return m
}

func (m *Memberlist) aliveNode(n MLNode) {
	if _, known := m.nodeMap[n.Name]; !known {
		m.nodeMap[n.Name] = &n
		m.config.Events.NotifyJoin(&n)
	}
}

func (m *Memberlist) Join(existing []string) (numSuccess int, errs error) {
	for _, addr := range existing {
		if err := m.pushPullNode(addr, true); err != nil {
			errs = errors.Join(errs, err)
		} else {
			numSuccess++
		}
	}
	return numSuccess, errs
}

func (m *Memberlist) pushPullNode(addr string, join bool) error {
	var local []MLNode
	for _, n := range m.nodeMap {
		local = append(local, *n)
	}
	remote, userState, err := m.config.Transport.PushPull(addr, local, m.config.Delegate.LocalState(join))
	if err != nil {
		return err
	}
	return m.mergeRemoteState(join, remote, userState)
}

func (m *Memberlist) mergeRemoteState(join bool, remoteNodes []MLNode, userBuf []byte) error {
	m.mergeState(remoteNodes) // aliveNode -> EventDelegate.NotifyJoin for new members
	if userBuf != nil && m.config.Delegate != nil {
		m.config.Delegate.MergeRemoteState(userBuf, join)
	}
	return nil
}

func (m *Memberlist) mergeState(remote []MLNode) {
	for _, r := range remote {
		m.aliveNode(r)
	}
}

// ---- ckit node.go ----

type localState struct {
	CurrentTime Time
	NodeStates  []StateMessage
}

type Node struct {
	name  string
	ml    *Memberlist
	clock Clock

	stateMut   sync.RWMutex
	localState State
	stopped    bool
	started    bool

	peerMut    sync.RWMutex
	peerStates map[string]StateMessage
	peers      map[string]Peer
	peerCache  []Peer
}

type nodeDelegate struct{ *Node }

func NewNode(name string, tr Transport) *Node {
	n := &Node{name: name, peerStates: map[string]StateMessage{}, peers: map[string]Peer{}}
	nd := &nodeDelegate{Node: n}
	n.ml = Create(&MLConfig{Name: name, Delegate: nd, Events: nd, Transport: tr})
	return n
}

func (n *Node) Start(peers []string) error {
	n.stateMut.Lock()
	defer n.stateMut.Unlock()

	if n.stopped {
		return ErrStopped
	}
	if _, err := n.ml.Join(peers); err != nil {
		return fmt.Errorf("failed to join memberlist: %w", err)
	}
	n.started = true
	return nil
}

func (n *Node) CurrentState() State {
	n.stateMut.RLock()
	defer n.stateMut.RUnlock()
	return n.localState
}

func (n *Node) Peers() []Peer {
	n.peerMut.RLock()
	defer n.peerMut.RUnlock()
	return n.peerCache
}

// handlePeersChanged must be called with peerMut held.
func (n *Node) handlePeersChanged() {
	newPeers := make([]Peer, 0, len(n.peers))
	for _, p := range n.peers {
		newPeers = append(newPeers, p)
	}
	n.peerCache = newPeers // ckit also updates the Sharder and queues an observer notification
}

func (nd *nodeDelegate) NotifyJoin(node *MLNode) {
	nd.peerMut.Lock()
	defer nd.peerMut.Unlock()
	nd.peers[node.Name] = Peer{Name: node.Name, Self: node.Name == nd.name, State: nd.peerStates[node.Name].NewState}
	nd.handlePeersChanged()
}

func (nd *nodeDelegate) LocalState(join bool) []byte {
	nd.peerMut.RLock()
	defer nd.peerMut.RUnlock()
	ls := localState{CurrentTime: nd.clock.Now()}
	for p := range nd.peers {
		ls.NodeStates = append(ls.NodeStates, nd.peerStates[p])
	}
	bb, _ := json.Marshal(&ls)
	return bb
}

func (nd *nodeDelegate) MergeRemoteState(buf []byte, join bool) {
	var rs localState
	if err := json.Unmarshal(buf, &rs); err != nil {
		return
	}
	nd.clock.Observe(rs.CurrentTime)

	nd.peerMut.Lock()
	defer nd.peerMut.Unlock()

	peersChanged := false
	for _, msg := range rs.NodeStates {
		if _, ok := nd.peers[msg.NodeName]; !ok {
			continue
		}
		curr, exist := nd.peerStates[msg.NodeName]
		if exist && msg.Time <= curr.Time {
			continue
		} else if msg.NodeName == nd.name {
			// A peer has a newer message about ourselves, likely from a previous
			// instance of the process; replace it with our current state.
			msg = StateMessage{NodeName: nd.name, NewState: nd.CurrentState(), Time: nd.clock.Tick()}
		}
		nd.peerStates[msg.NodeName] = msg
		p := nd.peers[msg.NodeName]
		p.State = msg.NewState
		nd.peers[msg.NodeName] = p
		peersChanged = true
	}
	if peersChanged {
		nd.handlePeersChanged()
	}
}

// remoteAgent is agent-0, which still remembers the previous instance of agent-1
// as a participant at lamport time 7.
type remoteAgent struct{}

func (remoteAgent) PushPull(addr string, local []MLNode, userState []byte) ([]MLNode, []byte, error) {
	ls := localState{CurrentTime: 9, NodeStates: []StateMessage{
		{NodeName: "agent-0", NewState: StateParticipant, Time: 3},
		{NodeName: "agent-1", NewState: StateParticipant, Time: 7},
	}}
	bb, err := json.Marshal(&ls)
	return []MLNode{{Name: "agent-0"}, {Name: "agent-1"}}, bb, err
}

func main() {
	n := NewNode("agent-1", remoteAgent{})
	if err := n.Start([]string{"agent-0.cluster.local:12345"}); err != nil {
		fmt.Println("start:", err)
		return
	}
	fmt.Println("joined cluster, peers:", len(n.Peers()), "state:", n.CurrentState())
}
