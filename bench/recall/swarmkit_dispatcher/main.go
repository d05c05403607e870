// Project: docker/swarmkit (dispatcher node store), as remembered.
// Bug: on leadership change the dispatcher walks all registered nodes and
// marks them "unknown" so they must re-heartbeat. Each registered node has its
// own mutex; the loop skipped nodes that were already down with `continue`
// before reaching the Unlock, leaking that node's lock. The next Heartbeat RPC
// from that node blocks forever on rn.mu.Lock().
package main

import (
	"context"
	"sync"
	"time"
)

type NodeStatus int

const (
	StatusReady NodeStatus = iota
	StatusUnknown
	StatusDown
)

type registeredNode struct {
	mu        sync.Mutex
	ID        string
	status    NodeStatus
	heartbeat time.Time
}

type nodeStore struct {
	sync.RWMutex
	nodes map[string]*registeredNode
}

func (s *nodeStore) get(id string) *registeredNode {
	s.RLock()
	defer s.RUnlock()
	return s.nodes[id]
}

func (s *nodeStore) list() []*registeredNode {
	s.RLock()
	defer s.RUnlock()
	out := make([]*registeredNode, 0, len(s.nodes))
	for _, rn := range s.nodes {
		out = append(out, rn)
	}
	return out
}

type Dispatcher struct {
	store *nodeStore
}

// markNodesUnknown runs when this manager becomes leader.
func (d *Dispatcher) markNodesUnknown(ctx context.Context) error {
	for _, rn := range d.store.list() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rn.mu.Lock()
		if rn.status == StatusDown {
			continue
		}
		rn.status = StatusUnknown
		rn.mu.Unlock()
	}
	return nil
}

// Heartbeat is the RPC handler agents call periodically.
func (d *Dispatcher) Heartbeat(ctx context.Context, nodeID string) error {
	rn := d.store.get(nodeID)
	if rn == nil {
		return context.Canceled
	}
	rn.mu.Lock()
	defer rn.mu.Unlock()
	rn.status = StatusReady
	rn.heartbeat = time.Now()
	return nil
}

func main() {
	s := &nodeStore{nodes: map[string]*registeredNode{
		"n1": {ID: "n1", status: StatusReady},
		"n2": {ID: "n2", status: StatusDown},
	}}
	d := &Dispatcher{store: s}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go d.markNodesUnknown(ctx)
	go func() {
		for {
			_ = d.Heartbeat(ctx, "n2")
			time.Sleep(10 * time.Millisecond)
		}
	}()
	time.Sleep(time.Second)
}
