// Project: docker/swarmkit, now moby/swarmkit (manager/dispatcher/dispatcher.go,
// manager/dispatcher/nodes.go), 2017.
// Issue #2184 "dispatcher processUpdatesLock may not unlock properly"; the fix
// moved the unlock of processUpdatesLock in markNodeReady into a defer.
//
// register -> markNodeReady locks d.processUpdatesLock (line 174) to wait
// on processUpdatesCond for the next node-update batch, but first checks
// whether the dispatcher was stopped; on that branch it returns d.ctx.Err()
// with the mutex still held. A node that registers while the manager loses
// leadership (Stop cancels d.ctx between register's isRunningLocked check and
// this lock) leaves the lock leaked. When the manager becomes leader again,
// Run's processUpdates (line 225) and every later registration's
// markNodeReady block on processUpdatesLock forever: no node can register and
// node status batches are never committed.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

const maxBatchItems, maxBatchInterval = 10000, 100 * time.Millisecond

type Node struct{ ID, Status, Addr string }

// MemoryStore stands in for the raft-backed store, slow when the cluster is loaded.
type MemoryStore struct {
	mu      sync.Mutex
	nodes   map[string]*Node
	latency time.Duration
}

func (s *MemoryStore) View(cb func(nodes map[string]*Node)) {
	time.Sleep(s.latency)
	s.mu.Lock()
	defer s.mu.Unlock()
	cb(s.nodes)
}

func (s *MemoryStore) Batch(cb func(nodes map[string]*Node) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cb(s.nodes)
}

// nodeStore tracks registered nodes and their heartbeats.
type nodeStore struct {
	mu    sync.RWMutex
	nodes map[string]string // node ID -> session ID
}

func (s *nodeStore) CheckRateLimit(id string) error { s.mu.RLock(); defer s.mu.RUnlock(); return nil }

func (s *nodeStore) Add(n *Node) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nodes[n.ID] = "session-" + n.ID
	return s.nodes[n.ID]
}

func (s *nodeStore) Delete(id string) { s.mu.Lock(); defer s.mu.Unlock(); delete(s.nodes, id) }

func (s *nodeStore) Clean() { s.mu.Lock(); defer s.mu.Unlock(); s.nodes = make(map[string]string) }

type nodeUpdate struct{ status, addr string }

// Dispatcher is responsible for dispatching tasks and tracking agent health.
type Dispatcher struct {
	mu     sync.Mutex
	nodes  *nodeStore
	store  *MemoryStore
	ctx    context.Context
	cancel context.CancelFunc

	nodeUpdates     map[string]nodeUpdate // indexed by node ID
	nodeUpdatesLock sync.Mutex

	downNodes             *nodeStore
	processUpdatesTrigger chan struct{}
	// for waiting for the next task/node batch update
	processUpdatesLock sync.Mutex
	processUpdatesCond *sync.Cond
}

func New(s *MemoryStore) *Dispatcher {
	d := &Dispatcher{nodes: &nodeStore{nodes: map[string]string{}}, downNodes: &nodeStore{nodes: map[string]string{}},
		store: s, nodeUpdates: make(map[string]nodeUpdate), processUpdatesTrigger: make(chan struct{}, 1)}
	d.processUpdatesCond = sync.NewCond(&d.processUpdatesLock)
	return d
}

// Run runs dispatcher tasks which should be run on leader dispatcher.
func (d *Dispatcher) Run(ctx context.Context) error {
	d.mu.Lock()
	if d.isRunning() {
		d.mu.Unlock()
		return errors.New("dispatcher is already running")
	}
	d.ctx, d.cancel = context.WithCancel(ctx)
	runCtx := d.ctx
	d.mu.Unlock()

	batchTimer := time.NewTimer(maxBatchInterval)
	defer batchTimer.Stop()
	for {
		select {
		case <-d.processUpdatesTrigger:
			d.processUpdates()
			batchTimer.Reset(maxBatchInterval)
		case <-batchTimer.C:
			d.processUpdates()
			batchTimer.Reset(maxBatchInterval)
		case <-runCtx.Done():
			return nil
		}
	}
}

// Stop stops dispatcher and closes all grpc streams.
func (d *Dispatcher) Stop() error {
	d.mu.Lock()
	if !d.isRunning() {
		d.mu.Unlock()
		return errors.New("dispatcher is already stopped")
	}
	d.cancel()
	d.mu.Unlock()
	d.nodes.Clean()

	d.processUpdatesLock.Lock()
	// In case there are any waiters. There is no chance of any starting
	// after this point, because they check if the context is canceled
	// before waiting.
	d.processUpdatesCond.Broadcast()
	d.processUpdatesLock.Unlock()
	return nil
}

func (d *Dispatcher) isRunningLocked() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.isRunning() {
		return errors.New("dispatcher is stopped")
	}
	return nil
}

func (d *Dispatcher) isRunning() bool {
	return d.ctx != nil && d.ctx.Err() == nil
}

// markNodeReady updates the description of a node, updates its address, and sets status to READY
func (d *Dispatcher) markNodeReady(nodeID string, addr string) error {
	d.nodeUpdatesLock.Lock()
	d.nodeUpdates[nodeID] = nodeUpdate{status: "READY", addr: addr}
	numUpdates := len(d.nodeUpdates)
	d.nodeUpdatesLock.Unlock()

	// Node is marked ready. Remove the node from down nodes if it is there.
	d.downNodes.Delete(nodeID)

	if numUpdates >= maxBatchItems {
		select {
		case d.processUpdatesTrigger <- struct{}{}:
		case <-d.ctx.Done():
			return d.ctx.Err()
		}
	}

	// Wait until the node update batch happens before unblocking register.
	d.processUpdatesLock.Lock()
	select {
	case <-d.ctx.Done():
		return d.ctx.Err()
	default:
	}
	d.processUpdatesCond.Wait()
	d.processUpdatesLock.Unlock()

	return nil
}

// register is used for registration of node with particular dispatcher.
func (d *Dispatcher) register(nodeID string, addr string) (string, error) {
	// prevent register until we're ready to accept it
	if err := d.isRunningLocked(); err != nil {
		return "", err
	}
	if err := d.nodes.CheckRateLimit(nodeID); err != nil {
		return "", err
	}
	var node *Node
	d.store.View(func(nodes map[string]*Node) { node = nodes[nodeID] })
	if node == nil {
		return "", errors.New("node not found")
	}
	if err := d.markNodeReady(nodeID, addr); err != nil {
		return "", err
	}
	return d.nodes.Add(node), nil
}

func (d *Dispatcher) processUpdates() {
	var nodeUpdates map[string]nodeUpdate
	d.nodeUpdatesLock.Lock()
	if len(d.nodeUpdates) != 0 {
		nodeUpdates = d.nodeUpdates
		d.nodeUpdates = make(map[string]nodeUpdate)
	}
	d.nodeUpdatesLock.Unlock()

	if len(nodeUpdates) == 0 {
		return
	}
	_ = d.store.Batch(func(nodes map[string]*Node) error {
		for id, u := range nodeUpdates {
			nodes[id].Status, nodes[id].Addr = u.status, u.addr
		}
		return nil
	})

	d.processUpdatesLock.Lock()
	d.processUpdatesCond.Broadcast()
	d.processUpdatesLock.Unlock()
}

func main() {
	d := New(&MemoryStore{nodes: map[string]*Node{"n1": {ID: "n1"}, "n2": {ID: "n2"}}, latency: 100 * time.Millisecond})
	go d.Run(context.Background())
	time.Sleep(10 * time.Millisecond)

	// A worker registers while the manager is losing leadership.
	errc := make(chan error, 1)
	go func() { _, err := d.register("n1", "10.0.0.1"); errc <- err }()
	time.Sleep(30 * time.Millisecond)
	_ = d.Stop()
	fmt.Println("first register:", <-errc)

	// Leadership is regained: the dispatcher runs again and a node registers.
	go d.Run(context.Background())
	time.Sleep(10 * time.Millisecond)
	sid, err := d.register("n2", "10.0.0.2")
	fmt.Println("ok, second register:", sid, err)
	_ = d.Stop()
}
