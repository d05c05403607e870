// Project: moby/moby (daemon/cluster/swarm.go, daemon/cluster/cluster.go,
// daemon/cluster/noderunner.go)
// Issue: moby/moby#40594 "daemon/cluster: add a missing Unlock" (backported to
// 19.03 as moby/moby#40604)
//
// Bug: `docker swarm init --force-new-cluster` on a node that is already part of
// a swarm runs Cluster.Init with c.nr != nil. Init takes c.mu (the RWMutex that
// guards the node runner and that every API handler read-locks) "temporarily to
// wait for presently running API handlers to finish" (Lock at line 210), then
// asks the embedded nodeState whether this node is a manager. On a worker it
// returns errSwarmNotManager without releasing c.mu. controlMutex is released
// by its defer, so the daemon looks healthy, but c.mu stays write-locked
// forever: the next reader, e.g. `docker info` -> Cluster.Info ->
// GetAdvertiseAddress, blocks in c.mu.RLock (line 182) and so does every other
// swarm API call.
package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

var (
	errSwarmExists     = errors.New("This node is already part of a swarm. Use \"docker swarm leave\" to leave this swarm and join another one.")
	errSwarmNotManager = errors.New("This node is not a swarm manager. Worker nodes can't be used to view or modify cluster state. Please run this command on a manager node or promote the current node to a manager.")
)

// LocalNodeState mirrors api/types/swarm.LocalNodeState.
type LocalNodeState string

const (
	LocalNodeStateInactive LocalNodeState = "inactive"
	LocalNodeStateActive   LocalNodeState = "active"
)

// InitRequest mirrors api/types/swarm.InitRequest (trimmed).
type InitRequest struct {
	ListenAddr      string
	AdvertiseAddr   string
	ForceNewCluster bool
}

// Info mirrors api/types/swarm.Info (trimmed).
type Info struct {
	NodeID           string
	NodeAddr         string
	LocalNodeState   LocalNodeState
	ControlAvailable bool
	Error            string
}

// manager and Node stand in for swarmkit's manager.Manager and node.Node.
type manager struct{}

type Node struct {
	nodeID  string
	manager *manager
}

func (n *Node) Manager() *manager { return n.manager }
func (n *Node) NodeID() string    { return n.nodeID }

type nodeStartConfig struct {
	LocalAddr       string
	ListenAddr      string
	AdvertiseAddr   string
	forceNewCluster bool
}

// nodeState represents information about the current state of the cluster and
// provides access to the grpc clients.
type nodeState struct {
	swarmNode     *Node
	controlClient interface{}
	status        LocalNodeState
	err           error
}

// IsActiveManager returns true if node is a manager ready to accept control requests.
func (ns nodeState) IsActiveManager() bool {
	return ns.controlClient != nil
}

// IsManager returns true if node is a manager.
func (ns nodeState) IsManager() bool {
	return ns.swarmNode != nil && ns.swarmNode.Manager() != nil
}

// NodeID returns node's ID or empty string if node is inactive.
func (ns nodeState) NodeID() string {
	if ns.swarmNode != nil {
		return ns.swarmNode.NodeID()
	}
	return ""
}

// nodeRunner implements a manager for continuously running swarmkit node,
// restarting them with backoff delays if needed.
type nodeRunner struct {
	nodeState
	mu       sync.RWMutex
	done     chan struct{} // closed when swarmNode exits
	ready    chan struct{} // closed when swarmNode becomes active
	config   nodeStartConfig
	stopping bool
}

func (n *nodeRunner) Ready() chan error {
	c := make(chan error, 1)
	n.mu.RLock()
	ready, done := n.ready, n.done
	n.mu.RUnlock()
	go func() {
		select {
		case <-ready:
		case <-done:
		}
		select {
		case <-ready:
		default:
			n.mu.RLock()
			c <- n.err
			n.mu.RUnlock()
		}
		close(c)
	}()
	return c
}

func (n *nodeRunner) Stop() error {
	n.mu.Lock()
	n.stopping = true
	done := n.done
	n.mu.Unlock()
	close(done)
	return nil
}

func (n *nodeRunner) State() nodeState {
	if n == nil {
		return nodeState{status: LocalNodeStateInactive}
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.nodeState
}

// Cluster provides capabilities to participate in a cluster as a worker or a
// manager.
type Cluster struct {
	mu              sync.RWMutex
	controlMutex    sync.RWMutex // protect init/join/leave user operations
	nr              *nodeRunner
	root            string
	actualLocalAddr string
}

func (c *Cluster) newNodeRunner(conf nodeStartConfig) (*nodeRunner, error) {
	nr := &nodeRunner{
		nodeState: nodeState{
			swarmNode:     &Node{nodeID: "mgr-" + conf.ListenAddr, manager: &manager{}},
			controlClient: struct{}{},
			status:        LocalNodeStateActive,
		},
		done:   make(chan struct{}),
		ready:  make(chan struct{}),
		config: conf,
	}
	close(nr.ready)
	return nr, nil
}

// currentNodeState should not be called without a read lock
func (c *Cluster) currentNodeState() nodeState {
	return c.nr.State()
}

// GetAdvertiseAddress returns the remotely reachable address of this node.
func (c *Cluster) GetAdvertiseAddress() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.nr != nil && c.nr.config.AdvertiseAddr != "" {
		advertiseHost, _, _ := splitHostPort(c.nr.config.AdvertiseAddr)
		return advertiseHost
	}
	return c.actualLocalAddr
}

// splitHostPort stands in for net.SplitHostPort (importing net links the cgo
// resolver, which hides the runtime's deadlock report).
func splitHostPort(hostport string) (host, port string, err error) {
	i := strings.LastIndex(hostport, ":")
	if i < 0 {
		return hostport, "", errors.New("missing port in address")
	}
	return hostport[:i], hostport[i+1:], nil
}

// Init initializes new cluster from user provided request.
func (c *Cluster) Init(req InitRequest) (string, error) {
	c.controlMutex.Lock()
	defer c.controlMutex.Unlock()
	if c.nr != nil {
		if req.ForceNewCluster {

			// Take c.mu temporarily to wait for presently running
			// API handlers to finish before shutting down the node.
			c.mu.Lock()
			if !c.nr.nodeState.IsManager() {
				c.mu.Unlock()
				return "", errSwarmNotManager
			}
			c.mu.Unlock()

			if err := c.nr.Stop(); err != nil {
				return "", err
			}
		} else {
			return "", errSwarmExists
		}
	}

	nr, err := c.newNodeRunner(nodeStartConfig{
		forceNewCluster: req.ForceNewCluster,
		ListenAddr:      req.ListenAddr,
		AdvertiseAddr:   req.AdvertiseAddr,
	})
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	c.nr = nr
	c.mu.Unlock()

	if err := <-nr.Ready(); err != nil {
		c.mu.Lock()
		c.nr = nil
		c.mu.Unlock()
		return "", err
	}
	state := nr.State()
	if state.swarmNode == nil { // should never happen but protect from panic
		return "", errors.New("invalid cluster state for spec initialization")
	}
	return state.NodeID(), nil
}

// Info returns information about the current cluster state.
func (c *Cluster) Info() Info {
	info := Info{
		NodeAddr: c.GetAdvertiseAddress(),
	}
	c.mu.RLock()
	defer c.mu.RUnlock()

	state := c.currentNodeState()
	info.LocalNodeState = state.status
	if state.err != nil {
		info.Error = state.err.Error()
	}
	if state.IsActiveManager() {
		info.ControlAvailable = true
	}
	info.NodeID = state.NodeID()
	return info
}

func main() {
	c := &Cluster{root: "/var/lib/docker/swarm"}
	// This daemon joined an existing swarm as a worker earlier.
	c.nr = &nodeRunner{
		nodeState: nodeState{
			swarmNode: &Node{nodeID: "worker-7f3a"},
			status:    LocalNodeStateActive,
		},
		done:   make(chan struct{}),
		ready:  make(chan struct{}),
		config: nodeStartConfig{ListenAddr: "0.0.0.0:2377", AdvertiseAddr: "10.0.0.12:2377"},
	}

	// docker swarm init --force-new-cluster (run on the worker by mistake)
	_, err := c.Init(InitRequest{ListenAddr: "0.0.0.0:2377", ForceNewCluster: true})
	fmt.Println("swarm init:", err)

	// docker info
	info := c.Info()
	fmt.Printf("swarm: %s node=%s addr=%s\n", info.LocalNodeState, info.NodeID, info.NodeAddr)
}
