// Project: cockroachdb/cockroach (pkg/storage/node_liveness.go, pkg/storage/store.go), v2.1 development, 2018 (approximate).
// Bug: NodeLiveness.maybeUpdate, run from the liveness gossip callback, invoked the registered IsLiveCallbacks while still holding nl.mu; the store's nodeIsLiveCallback refreshes its cached liveness map through NodeLiveness.GetIsLiveMap, which locks nl.mu again, so the gossip goroutine deadlocks as soon as a dead node becomes live (fixed by copying the callbacks under the lock and running them after nl.mu is released).
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

type NodeID int32
type RangeID int64

type ManualClock struct{ nanos int64 }

func (c *ManualClock) Now() int64 { return atomic.LoadInt64(&c.nanos) }

type Liveness struct {
	NodeID     NodeID
	Epoch      int64
	Expiration int64
}

func (l *Liveness) IsLive(now int64) bool { return now < l.Expiration }

type IsLiveCallback func(nodeID NodeID)

type IsLiveMap map[NodeID]bool

// NodeLiveness keeps track of the liveness records gossiped by every node.
type NodeLiveness struct {
	clock *ManualClock
	mu    struct {
		sync.Mutex
		callbacks []IsLiveCallback
		nodes     map[NodeID]Liveness
	}
}

func NewNodeLiveness(clock *ManualClock) *NodeLiveness {
	nl := &NodeLiveness{clock: clock}
	nl.mu.nodes = map[NodeID]Liveness{}
	return nl
}

// RegisterCallback registers a callback to be invoked any time a node's
// IsLive() state changes to true.
func (nl *NodeLiveness) RegisterCallback(cb IsLiveCallback) {
	nl.mu.Lock()
	defer nl.mu.Unlock()
	nl.mu.callbacks = append(nl.mu.callbacks, cb)
}

// GetIsLiveMap returns a map of nodeID to boolean liveness status.
func (nl *NodeLiveness) GetIsLiveMap() IsLiveMap {
	lMap := IsLiveMap{}
	nl.mu.Lock()
	defer nl.mu.Unlock()
	now := nl.clock.Now()
	for nID, l := range nl.mu.nodes {
		lMap[nID] = l.IsLive(now)
	}
	return lMap
}

func shouldReplace(old, new Liveness) bool {
	if old.Epoch != new.Epoch {
		return old.Epoch < new.Epoch
	}
	return old.Expiration < new.Expiration
}

// livenessGossipUpdate is the gossip callback used to keep the in-memory
// liveness info up to date.
func (nl *NodeLiveness) livenessGossipUpdate(key string, content Liveness) {
	nl.maybeUpdate(content)
}

func (nl *NodeLiveness) maybeUpdate(new Liveness) {
	nl.mu.Lock()
	// Note that this works fine even if `old` is empty.
	old := nl.mu.nodes[new.NodeID]
	should := shouldReplace(old, new)
	var callbacks []IsLiveCallback
	if should {
		nl.mu.nodes[new.NodeID] = new
		callbacks = append(callbacks, nl.mu.callbacks...)
	}
	nl.mu.Unlock()

	if !should {
		return
	}

	now := nl.clock.Now()
	if !old.IsLive(now) && new.IsLive(now) {
		for _, fn := range callbacks {
			fn(new.NodeID)
		}
	}
}

type ReplicaDescriptor struct{ NodeID NodeID }

type Replica struct {
	RangeID RangeID
	mu      struct {
		sync.RWMutex
		replicas  []ReplicaDescriptor
		quiescent bool
	}
}

func (r *Replica) Desc() []ReplicaDescriptor {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.mu.replicas
}

func (r *Replica) unquiesce() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.quiescent = false
}

type StoreConfig struct{ NodeLiveness *NodeLiveness }

type Store struct {
	cfg         StoreConfig
	livenessMap atomic.Value // IsLiveMap
	mu          struct {
		replicas sync.Map // RangeID -> *Replica
	}
}

// nodeIsLiveCallback is invoked when a node transitions from non-live to
// live. Iterate through all replicas and find any which belong to ranges
// containing the implicated node. Unquiesce if necessary.
func (s *Store) nodeIsLiveCallback(nodeID NodeID) {
	// Update the liveness map.
	s.livenessMap.Store(s.cfg.NodeLiveness.GetIsLiveMap())

	s.mu.replicas.Range(func(k, v interface{}) bool {
		r := v.(*Replica)
		for _, rep := range r.Desc() {
			if rep.NodeID == nodeID {
				r.unquiesce()
			}
		}
		return true
	})
}

func (s *Store) Start() {
	s.cfg.NodeLiveness.RegisterCallback(s.nodeIsLiveCallback)
}

func main() {
	clock := &ManualClock{nanos: 100}
	nl := NewNodeLiveness(clock)
	s := &Store{cfg: StoreConfig{NodeLiveness: nl}}
	for i := RangeID(1); i <= 3; i++ {
		r := &Replica{RangeID: i}
		r.mu.replicas = []ReplicaDescriptor{{NodeID: 1}, {NodeID: 2}, {NodeID: 3}}
		r.mu.quiescent = true
		s.mu.replicas.Store(i, r)
	}
	s.Start()

	// Node 2's record expired a while ago.
	nl.livenessGossipUpdate("liveness:2", Liveness{NodeID: 2, Epoch: 1, Expiration: 50})
	// Node 2 restarts, increments its epoch and heartbeats again.
	nl.livenessGossipUpdate("liveness:2", Liveness{NodeID: 2, Epoch: 2, Expiration: 9000})

	fmt.Println("liveness map:", s.livenessMap.Load())
}
