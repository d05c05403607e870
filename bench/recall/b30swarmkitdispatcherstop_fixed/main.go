// Project: moby/swarmkit (manager/dispatcher/dispatcher.go: Dispatcher.Stop, Session, register,
// markNodeReady, Run, processUpdates; manager/dispatcher/nodes.go nodeStore)
// Issue: moby/swarmkit#2744 "[manager/dispatcher] Fix deadlock in dispatcher" (superseding #2742,
// Docker escalation 698; backported as #2753). Introduced with the rpcRW lock (#2664 era).
//
// Bug: every dispatcher RPC holds d.rpcRW.RLock for its whole duration so that Stop can use
// d.rpcRW.Lock as a barrier. Session -> register -> markNodeReady queues the node's READY
// update and then waits on d.processUpdatesCond (line 271) until the Run loop's next
// processUpdates batch Broadcasts - still holding rpcRW's read lock. Stop cancels the
// dispatcher context, which makes Run return, so the only remaining Broadcast is the one
// Stop itself does "in case there are any waiters". But Stop first takes d.rpcRW.Lock
// (line 193) to wait for all in-flight RPCs, and only afterwards Broadcasts (line 202). The
// write lock waits for the Session's read lock, the Session waits for the Broadcast that
// comes after the write lock: Stop never returns (leadership change wedges the manager).
//
// Fix (#2744): Broadcast processUpdatesCond (under processUpdatesLock) right after d.cancel(),
// before acquiring d.rpcRW.Lock.
// FIXED twin: Stop broadcasts processUpdatesCond before taking rpcRW.Lock (#2744).
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

const maxBatchItems = 10000

var maxBatchInterval = 100 * time.Millisecond

// ---------------------------------------------------------------------------
// api (trimmed)
// ---------------------------------------------------------------------------

type NodeStatus struct {
	State string
	Addr  string
}

type NodeDescription struct {
	Hostname string
}

type Node struct {
	ID     string
	Status NodeStatus
}

type SessionRequest struct {
	SessionID   string
	Description *NodeDescription
}

// ---------------------------------------------------------------------------
// manager/dispatcher/nodes.go (trimmed)
// ---------------------------------------------------------------------------

type registeredNode struct {
	SessionID  string
	Node       *Node
	Disconnect chan struct{}
}

type nodeStore struct {
	mu    sync.RWMutex
	nodes map[string]*registeredNode
}

func newNodeStore() *nodeStore {
	return &nodeStore{nodes: make(map[string]*registeredNode)}
}

func (s *nodeStore) Add(n *Node) *registeredNode {
	s.mu.Lock()
	defer s.mu.Unlock()
	rn := &registeredNode{SessionID: "session-" + n.ID, Node: n, Disconnect: make(chan struct{})}
	s.nodes[n.ID] = rn
	return rn
}

func (s *nodeStore) Delete(id string) {
	s.mu.Lock()
	delete(s.nodes, id)
	s.mu.Unlock()
}

func (s *nodeStore) Clean() {
	s.mu.Lock()
	for _, rn := range s.nodes {
		close(rn.Disconnect)
	}
	s.nodes = make(map[string]*registeredNode)
	s.mu.Unlock()
}

// ---------------------------------------------------------------------------
// manager/dispatcher/dispatcher.go
// ---------------------------------------------------------------------------

type nodeUpdate struct {
	status      *NodeStatus
	description *NodeDescription
}

// Dispatcher is responsible for dispatching tasks and tracking agent health.
type Dispatcher struct {
	// Mutex to synchronize access to dispatcher shared state e.g. nodes,
	// lastSeenManagers, networkBootstrapKeys etc.
	mu sync.Mutex
	// WaitGroup to handle the case when Stop() gets called before Run()
	// has finished initializing the dispatcher.
	wg sync.WaitGroup
	// This RWMutex synchronizes RPC handlers and the dispatcher stop().
	// The RPC handlers use the read lock while stop() uses the write lock
	// and acts as a barrier to shutdown.
	rpcRW     sync.RWMutex
	nodes     *nodeStore
	downNodes *nodeStore
	ctx       context.Context
	cancel    context.CancelFunc

	nodeUpdates     map[string]nodeUpdate // indexed by node ID
	nodeUpdatesLock sync.Mutex

	processUpdatesTrigger chan struct{}

	// for waiting for the next task/node batch update
	processUpdatesLock sync.Mutex
	processUpdatesCond *sync.Cond
}

// New returns Dispatcher with cluster interface(usually raft.Node).
func New() *Dispatcher {
	d := &Dispatcher{
		nodes:                 newNodeStore(),
		downNodes:             newNodeStore(),
		processUpdatesTrigger: make(chan struct{}, 1),
	}
	d.processUpdatesCond = sync.NewCond(&d.processUpdatesLock)
	return d
}

// Run runs dispatcher tasks which should be run on leader dispatcher.
// Dispatcher can be stopped with cancelling ctx or calling Stop().
func (d *Dispatcher) Run(ctx context.Context) error {
	d.nodeUpdatesLock.Lock()
	d.nodeUpdates = make(map[string]nodeUpdate)
	d.nodeUpdatesLock.Unlock()

	d.mu.Lock()
	if d.isRunning() {
		d.mu.Unlock()
		return errors.New("dispatcher is already running")
	}
	d.ctx, d.cancel = context.WithCancel(ctx)
	ctx = d.ctx
	d.wg.Add(1)
	defer d.wg.Done()
	d.mu.Unlock()

	batchTimer := time.NewTimer(maxBatchInterval)
	defer batchTimer.Stop()

	for {
		select {
		case <-batchTimer.C:
			d.processUpdates(ctx)
			batchTimer.Reset(maxBatchInterval)
		case <-d.processUpdatesTrigger:
			d.processUpdates(ctx)
			batchTimer.Reset(maxBatchInterval)
		case <-ctx.Done():
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

	d.processUpdatesLock.Lock()
	// when we called d.cancel(), there may have been waiters currently
	// waiting. they would be forever sleeping if we didn't call Broadcast here
	// after we canceled. we do this before we try to acquire the rpcRW lock
	// because the waiters hold the rpcRW read lock and would otherwise never
	// release it, deadlocking Stop.
	d.processUpdatesCond.Broadcast()
	d.processUpdatesLock.Unlock()

	// The active nodes list can be cleaned out only when all
	// existing RPCs have finished.
	// RPCs that start after rpcRW.Unlock() should find the context
	// cancelled and should fail organically.
	d.rpcRW.Lock()
	d.nodes.Clean()
	d.downNodes.Clean()
	d.rpcRW.Unlock()

	d.wg.Wait()

	return nil
}

func (d *Dispatcher) isRunningLocked() (context.Context, error) {
	d.mu.Lock()
	if !d.isRunning() {
		d.mu.Unlock()
		return nil, errors.New("dispatcher is stopped")
	}
	ctx := d.ctx
	d.mu.Unlock()
	return ctx, nil
}

func (d *Dispatcher) isRunning() bool {
	if d.ctx == nil {
		return false
	}
	select {
	case <-d.ctx.Done():
		return false
	default:
	}
	return true
}

// markNodeReady updates the description of a node, updates its address, and sets status to READY
// this is used during registration when a new node description is provided
// and during node updates when the node description changes
func (d *Dispatcher) markNodeReady(ctx context.Context, nodeID string, description *NodeDescription, addr string) error {
	d.nodeUpdatesLock.Lock()
	d.nodeUpdates[nodeID] = nodeUpdate{
		status: &NodeStatus{
			State: "READY",
			Addr:  addr,
		},
		description: description,
	}
	numUpdates := len(d.nodeUpdates)
	d.nodeUpdatesLock.Unlock()

	// Node is marked ready. Remove the node from down nodes if it
	// is there.
	d.downNodes.Delete(nodeID)

	if numUpdates >= maxBatchItems {
		select {
		case d.processUpdatesTrigger <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}

	// Wait until the node update batch happens before unblocking.
	// Use a closure here to make sure the unlock is not missed.
	func() {
		d.processUpdatesLock.Lock()
		defer d.processUpdatesLock.Unlock()

		select {
		case <-ctx.Done():
			return
		default:
		}
		d.processUpdatesCond.Wait()
	}()

	return nil
}

// register is used for registration of node with particular dispatcher.
func (d *Dispatcher) register(ctx context.Context, nodeID string, description *NodeDescription) (string, error) {
	// prevent register until we're ready to accept it
	dctx, err := d.isRunningLocked()
	if err != nil {
		return "", err
	}

	node := &Node{ID: nodeID}
	if err := d.markNodeReady(dctx, nodeID, description, "10.0.0.2"); err != nil {
		return "", err
	}

	rn := d.nodes.Add(node)
	return rn.SessionID, nil
}

func (d *Dispatcher) processUpdates(ctx context.Context) {
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

	// store.Batch: write the node statuses (trimmed)

	d.processUpdatesLock.Lock()
	// In case there are any waiters. There is no chance of any starting
	// after this point, because they check if the context is canceled
	// before waiting.
	d.processUpdatesCond.Broadcast()
	d.processUpdatesLock.Unlock()
}

// Session is a stream which controls agent connection.
// Each message contains list of backup Managers with weights. Also there is
// a special boolean field Disconnect which if true indicates that node should
// reconnect to another Manager immediately.
func (d *Dispatcher) Session(nodeID string, r *SessionRequest) error {
	d.rpcRW.RLock()
	defer d.rpcRW.RUnlock()

	dctx, err := d.isRunningLocked()
	if err != nil {
		return err
	}

	// register the node.
	sessionID, err := d.register(dctx, nodeID, r.Description)
	if err != nil {
		return err
	}
	_ = sessionID // stream.Send(&api.SessionMessage{SessionID: sessionID, ...})

	<-dctx.Done()
	return errors.New("node must disconnect")
}

// ---------------------------------------------------------------------------
// test driver: a worker opens its session, then the manager loses leadership
// ---------------------------------------------------------------------------

func main() {
	d := New()
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		_ = d.Run(context.Background())
	}()
	for {
		if _, err := d.isRunningLocked(); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}

	sessionDone := make(chan error, 1)
	go func() {
		sessionDone <- d.Session("worker-1", &SessionRequest{Description: &NodeDescription{Hostname: "worker-1"}})
	}()
	time.Sleep(10 * time.Millisecond) // Session is waiting on processUpdatesCond

	// Leadership lost: the manager stops its dispatcher.
	if err := d.Stop(); err != nil {
		fmt.Println("stop:", err)
	}
	<-runDone
	fmt.Println("dispatcher stopped; session:", <-sessionDone)
}
