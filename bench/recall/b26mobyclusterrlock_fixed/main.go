// Project: docker/moby (daemon/cluster)
// Bug: Cluster.Info holds c.mu.RLock while querying the manager and then calls
// the exported IsManager, which takes c.mu.RLock again; a concurrent
// "swarm leave" queued on c.mu.Lock in between blocks the nested read lock.
// Fix: use the already-held node state (c.currentNodeState()) inside Info.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

type LocalNodeState string

const (
	LocalNodeStateInactive LocalNodeState = "inactive"
	LocalNodeStateActive   LocalNodeState = "active"
)

var errNoSwarm = errors.New("This node is not part of a swarm")

type Info struct {
	NodeID           string
	NodeAddr         string
	LocalNodeState   LocalNodeState
	ControlAvailable bool
	Managers         int
	Nodes            int
	Error            string
}

type controlClient struct{ latency time.Duration }

func (cc *controlClient) ListNodes(ctx context.Context) (int, int, error) {
	select {
	case <-time.After(cc.latency):
		return 3, 7, nil
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
}

type nodeState struct {
	nodeID        string
	addr          string
	status        LocalNodeState
	isManager     bool
	controlClient *controlClient
	err           error
}

func (ns nodeState) IsActiveManager() bool { return ns.controlClient != nil && ns.isManager }

type nodeRunner struct {
	mu    sync.RWMutex
	state nodeState
}

func (nr *nodeRunner) State() nodeState {
	nr.mu.RLock()
	defer nr.mu.RUnlock()
	return nr.state
}

func (nr *nodeRunner) Stop() error {
	nr.mu.Lock()
	nr.state = nodeState{status: LocalNodeStateInactive}
	nr.mu.Unlock()
	return nil
}

type Cluster struct {
	mu           sync.RWMutex
	controlMutex sync.Mutex
	nr           *nodeRunner
	root         string
	stop         bool
	attachers    map[string]struct{}
}

func (c *Cluster) currentNodeState() nodeState {
	if c.nr == nil {
		return nodeState{status: LocalNodeStateInactive}
	}
	return c.nr.State()
}

func (c *Cluster) IsManager() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.currentNodeState().IsActiveManager()
}

func (c *Cluster) getRequestContext() (context.Context, func()) {
	return context.WithTimeout(context.Background(), 2*time.Second)
}

func (c *Cluster) Info() Info {
	info := Info{NodeAddr: "", LocalNodeState: LocalNodeStateInactive}
	c.mu.RLock()
	defer c.mu.RUnlock()

	state := c.currentNodeState()
	info.LocalNodeState = state.status
	if state.err != nil {
		info.Error = state.err.Error()
	}
	ctx, cancel := c.getRequestContext()
	defer cancel()

	if state.IsActiveManager() {
		managers, nodes, err := state.controlClient.ListNodes(ctx)
		if err != nil {
			info.Error = err.Error()
		}
		info.Managers, info.Nodes = managers, nodes
	}
	info.NodeID = state.nodeID
	info.NodeAddr = state.addr
	info.ControlAvailable = state.IsActiveManager()
	return info
}

func (c *Cluster) Leave(force bool) error {
	c.controlMutex.Lock()
	defer c.controlMutex.Unlock()

	c.mu.Lock()
	nr := c.nr
	if nr == nil {
		c.mu.Unlock()
		return errNoSwarm
	}
	state := c.currentNodeState()
	if state.IsActiveManager() && !force {
		c.mu.Unlock()
		return errors.New("You are attempting to leave the swarm on a node that is participating as a manager. Use --force to ignore this message.")
	}
	c.nr = nil
	c.mu.Unlock()

	if err := nr.Stop(); err != nil {
		return err
	}
	c.attachers = map[string]struct{}{}
	return nil
}

func main() {
	c := &Cluster{
		root:      "/var/lib/docker/swarm",
		attachers: map[string]struct{}{},
		nr: &nodeRunner{state: nodeState{
			nodeID: "x3j9k2", addr: "192.168.65.3", status: LocalNodeStateActive,
			isManager: true, controlClient: &controlClient{latency: 100 * time.Millisecond},
		}},
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // GET /info
		defer wg.Done()
		info := c.Info()
		fmt.Printf("swarm: %s managers=%d nodes=%d control=%v\n", info.LocalNodeState, info.Managers, info.Nodes, info.ControlAvailable)
	}()
	go func() { // POST /swarm/leave?force=1
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		if err := c.Leave(true); err != nil {
			fmt.Println("leave:", err)
		}
	}()
	wg.Wait()
}
