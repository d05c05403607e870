// Command b72swarmkitnodeloop models the dispatcher of swarmkit's manager
// (manager/dispatcher/dispatcher.go and nodes.go): the nodeStore of
// registeredNode entries, each with its own mutex guarding the session and
// the cached api.Node, and the heartbeat path that validates the session.
//
// Modelled on swarmkit, no specific upstream bug. After a leadership change
// the dispatcher refreshes every registered node from the raft store. The
// loop body locks the registeredNode, looks the node up and unlocks at the
// bottom, but the branch taken for a node that was just removed from the
// store ("docker node rm --force") continues to the next node with the
// registeredNode mutex still held. The removed node's agent is still
// connected, and its next Heartbeat goes through nodeStore.GetWithSession to
// registeredNode.checkSessionID, which blocks forever on that mutex.
//
// The fixed twin unlocks the registeredNode before continuing.
package main

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

type NodeState int

const (
	NodeStatusUnknown NodeState = iota
	NodeStatusDown
	NodeStatusReady
)

type Node struct {
	ID    string
	State NodeState
	Addr  string
}

type heartbeat struct {
	mu      sync.Mutex
	timeout time.Duration
	last    time.Time
}

func (hb *heartbeat) Update(d time.Duration) {
	hb.mu.Lock()
	hb.timeout = d
	hb.last = time.Now()
	hb.mu.Unlock()
}

type registeredNode struct {
	SessionID  string
	Heartbeat  *heartbeat
	Registered time.Time
	Attempts   int
	Node       *Node
	mu         sync.Mutex
}

var errSessionInvalid = errors.New("node session is invalid")

func (rn *registeredNode) checkSessionID(sessionID string) error {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	if rn.SessionID != sessionID {
		return errSessionInvalid
	}
	return nil
}

type nodeStore struct {
	period time.Duration
	nodes  map[string]*registeredNode
	mu     sync.RWMutex
}

func (s *nodeStore) Get(id string) (*registeredNode, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	rn, ok := s.nodes[id]
	if !ok {
		return nil, fmt.Errorf("node %s is not found", id)
	}
	return rn, nil
}

func (s *nodeStore) GetWithSession(id, sid string) (*registeredNode, error) {
	rn, err := s.Get(id)
	if err != nil {
		return nil, err
	}
	return rn, rn.checkSessionID(sid)
}

func (s *nodeStore) Heartbeat(id, sid string) (time.Duration, error) {
	rn, err := s.GetWithSession(id, sid)
	if err != nil {
		return 0, err
	}
	rn.Heartbeat.Update(s.period)
	return s.period, nil
}

func (s *nodeStore) list() []*registeredNode {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ids := make([]string, 0, len(s.nodes))
	for id := range s.nodes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]*registeredNode, 0, len(ids))
	for _, id := range ids {
		out = append(out, s.nodes[id])
	}
	return out
}

type memoryStore struct {
	mu    sync.RWMutex
	nodes map[string]*Node
}

func (m *memoryStore) GetNode(id string) *Node {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if n, ok := m.nodes[id]; ok {
		cp := *n
		return &cp
	}
	return nil
}

type Dispatcher struct {
	nodes *nodeStore
	store *memoryStore
}

func (d *Dispatcher) refreshRegisteredNodes() int {
	refreshed := 0
	for _, rn := range d.nodes.list() {
		rn.mu.Lock()
		storeNode := d.store.GetNode(rn.Node.ID)
		if storeNode == nil {
			continue
		}
		if storeNode.State == NodeStatusDown {
			rn.Attempts = 0
		}
		rn.Node = storeNode
		refreshed++
		rn.mu.Unlock()
	}
	return refreshed
}

func (d *Dispatcher) Heartbeat(nodeID, sessionID string) (time.Duration, error) {
	return d.nodes.Heartbeat(nodeID, sessionID)
}

func main() {
	store := &memoryStore{nodes: map[string]*Node{}}
	ns := &nodeStore{period: 5 * time.Second, nodes: map[string]*registeredNode{}}
	for i, id := range []string{"node-a", "node-b", "node-c"} {
		n := &Node{ID: id, State: NodeStatusReady, Addr: fmt.Sprintf("10.0.0.%d:2377", i+1)}
		store.nodes[id] = n
		ns.nodes[id] = &registeredNode{SessionID: "s-" + id, Heartbeat: &heartbeat{}, Registered: time.Now(), Node: n}
	}
	d := &Dispatcher{nodes: ns, store: store}

	store.mu.Lock()
	delete(store.nodes, "node-b")
	store.mu.Unlock()

	done := make(chan int)
	go func() {
		done <- d.refreshRegisteredNodes()
	}()
	fmt.Println("refreshed", <-done, "nodes after leader election")

	for _, id := range []string{"node-a", "node-b"} {
		period, err := d.Heartbeat(id, "s-"+id)
		fmt.Println("heartbeat", id, period, err)
	}
}
