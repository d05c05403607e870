// Project: moby/moby, Docker 1.13 (daemon/cluster/cluster.go Cluster.Init/startNewNode/IsAgent;
// daemon/daemon.go Daemon.SetClusterProvider; daemon/container_operations.go connectToNetwork;
// vendored docker/libnetwork controller.go SetClusterProvider/isAgent, network.go driver/addEndpoint)
// Issue: moby/moby#29952 "[1.13] Deadlock in SetClusterProvider/libnetwork callbacks";
// fixed for 1.13 by moby/moby#30038 "Add workaround for possible SetClusterProvider deadlock"
// (master got the larger cluster-lock rework in moby/moby#28907).
//
// Bug: lock-order inversion between the swarm Cluster's RWMutex and libnetwork's controller
// mutex, reached through two interfaces. `docker swarm init` runs Cluster.Init, which takes the
// cluster write lock (c.Lock, line 246) and, in startNewNode, calls
// c.config.Backend.SetClusterProvider(c) (executor Backend interface, implemented by *Daemon),
// which calls daemon.netController.SetClusterProvider (NetworkController interface), which takes
// the controller lock (line 156). Concurrently a container is being connected to a network:
// connectToNetwork -> network.CreateEndpoint -> addEndpoint -> network.driver -> controller.isAgent
// takes the controller lock (line 163) and asks the cluster.Provider (the *Cluster) IsAgent(),
// which read-locks the cluster (line 284). Cluster lock -> controller lock on one goroutine and
// controller lock -> cluster lock on the other: both block forever.
//
// Fix (#30038): Daemon.SetClusterProvider calls netController.SetClusterProvider in a new
// goroutine, so it is no longer made under the cluster lock.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ---------------------------------------------------------------------------
// libnetwork/cluster
// ---------------------------------------------------------------------------

// Provider provides clustering config details
type Provider interface {
	IsManager() bool
	IsAgent() bool
	GetLocalAddress() string
}

// ---------------------------------------------------------------------------
// libnetwork (config, controller, network, endpoint)
// ---------------------------------------------------------------------------

type DaemonCfg struct {
	ClusterProvider Provider
}

type Config struct {
	Daemon DaemonCfg
}

// NetworkController provides the interface for controller instance which
// manages networks.
type NetworkController interface {
	NetworkByName(name string) (Network, error)
	SetClusterProvider(provider Provider)
}

// Network represents a logical connectivity zone that containers may join.
type Network interface {
	Name() string
	CreateEndpoint(name string) (Endpoint, error)
}

type Endpoint interface {
	Name() string
}

type controller struct {
	cfg      *Config
	networks map[string]*network
	sync.Mutex
}

type network struct {
	ctrlr       *controller
	name        string
	networkType string
	scope       string
	endpoints   map[string]*endpoint
	sync.Mutex
}

type endpoint struct {
	name    string
	network *network
}

func (ep *endpoint) Name() string { return ep.name }

func New() *controller {
	c := &controller{cfg: &Config{}, networks: map[string]*network{}}
	c.networks["overlay-net"] = &network{
		ctrlr:       c,
		name:        "overlay-net",
		networkType: "overlay",
		scope:       "global",
		endpoints:   map[string]*endpoint{},
	}
	return c
}

func (c *controller) NetworkByName(name string) (Network, error) {
	c.Lock()
	n, ok := c.networks[name]
	c.Unlock()
	if !ok {
		return nil, errors.New("network not found")
	}
	return n, nil
}

func (n *network) Name() string { return n.name }

func (n *network) getController() *controller {
	n.Lock()
	defer n.Unlock()
	return n.ctrlr
}

func (n *network) CreateEndpoint(name string) (Endpoint, error) {
	ep := &endpoint{name: name, network: n}
	if err := n.addEndpoint(ep); err != nil {
		return nil, err
	}
	n.Lock()
	n.endpoints[name] = ep
	n.Unlock()
	return ep, nil
}

func (n *network) addEndpoint(ep *endpoint) error {
	_, err := n.driver(true)
	if err != nil {
		return fmt.Errorf("failed to add endpoint: %v", err)
	}
	// d.CreateEndpoint(n.id, ep.id, ep.Interface(), ep.generic) ...
	return nil
}

func (n *network) driver(load bool) (string, error) {
	c := n.getController()
	n.Lock()
	if c.isAgent() {
		// If we are running in agent mode then all networks
		// in libnetwork are local scope regardless of the
		// backing driver.
		n.scope = "local"
	}
	n.Unlock()
	return n.networkType, nil
}

func (c *controller) SetClusterProvider(provider Provider) {
	c.Lock()
	c.cfg.Daemon.ClusterProvider = provider
	c.Unlock()
	// (agent init / disable-provider signalling trimmed)
}

func (c *controller) isAgent() bool {
	c.Lock()
	defer c.Unlock()
	if c.cfg == nil || c.cfg.Daemon.ClusterProvider == nil {
		return false
	}
	return c.cfg.Daemon.ClusterProvider.IsAgent()
}

// ---------------------------------------------------------------------------
// daemon
// ---------------------------------------------------------------------------

type Daemon struct {
	netController   NetworkController
	clusterProvider Provider
}

// SetClusterProvider sets a component for querying the current cluster state.
func (daemon *Daemon) SetClusterProvider(clusterProvider Provider) {
	daemon.clusterProvider = clusterProvider
	daemon.netController.SetClusterProvider(clusterProvider)
}

// IsSwarmCompatible verifies if the current daemon configuration is compatible with swarm mode
func (daemon *Daemon) IsSwarmCompatible() error { return nil }

func (daemon *Daemon) connectToNetwork(containerName, idOrName string) error {
	n, err := daemon.netController.NetworkByName(idOrName)
	if err != nil {
		return err
	}
	_, err = n.CreateEndpoint(containerName)
	return err
}

// ---------------------------------------------------------------------------
// daemon/cluster/executor (Backend) and swarmkit node (external, faked)
// ---------------------------------------------------------------------------

// Backend defines the executor component for a swarm agent.
type Backend interface {
	IsSwarmCompatible() error
	SetClusterProvider(provider Provider)
}

// swarmNode stands in for github.com/docker/swarmkit/node.Node; Start brings up
// the raft/agent machinery, which takes a while.
type swarmNode struct {
	started chan struct{} // test driver: closed when Start is entered
	proceed chan struct{} // test driver: Start returns once closed
}

func (n *swarmNode) Start() error {
	close(n.started)
	<-n.proceed
	return nil
}

// ---------------------------------------------------------------------------
// daemon/cluster
// ---------------------------------------------------------------------------

type ClusterConfig struct {
	Root    string
	Backend Backend
}

type node struct {
	*swarmNode
	ready bool
}

// Cluster provides capabilities to participate in a cluster as a worker or a
// manager.
type Cluster struct {
	sync.RWMutex
	*node
	config  ClusterConfig
	newNode func() *swarmNode
}

// Init initializes new cluster from user provided request.
func (c *Cluster) Init(listenAddr string) (string, error) {
	c.Lock()
	if c.node != nil {
		c.Unlock()
		return "", errors.New("This node is already part of a swarm.")
	}
	n, err := c.startNewNode(listenAddr)
	if err != nil {
		c.Unlock()
		return "", err
	}
	c.Unlock()
	_ = n
	return "node-id", nil
}

func (c *Cluster) startNewNode(listenAddr string) (*node, error) {
	if err := c.config.Backend.IsSwarmCompatible(); err != nil {
		return nil, err
	}
	n := c.newNode()
	if err := n.Start(); err != nil {
		return nil, err
	}
	node := &node{swarmNode: n, ready: true}
	c.node = node
	c.config.Backend.SetClusterProvider(c)
	return node, nil
}

// IsManager returns true if Cluster is participating as a manager.
func (c *Cluster) IsManager() bool {
	c.RLock()
	defer c.RUnlock()
	return c.node != nil && c.ready
}

// IsAgent returns true if Cluster is participating as a worker/agent.
func (c *Cluster) IsAgent() bool {
	c.RLock()
	defer c.RUnlock()
	return c.node != nil && c.ready
}

func (c *Cluster) GetLocalAddress() string { return "10.0.0.1" }

// ---------------------------------------------------------------------------
// test driver (dockerd start-up, then `docker swarm init` racing a container start)
// ---------------------------------------------------------------------------

func main() {
	d := &Daemon{netController: New()}
	sn := &swarmNode{started: make(chan struct{}), proceed: make(chan struct{})}
	c := &Cluster{
		config:  ClusterConfig{Root: "/var/lib/docker/swarm", Backend: d},
		newNode: func() *swarmNode { return sn },
	}
	// cmd/dockerd: cluster.New(...) then d.SetClusterProvider(c)
	d.SetClusterProvider(c)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // docker swarm init
		defer wg.Done()
		if _, err := c.Init("0.0.0.0:2377"); err != nil {
			fmt.Println("init:", err)
		}
	}()
	<-sn.started // Init holds the cluster lock while the swarm node starts

	go func() { // docker start / network connect of a container
		defer wg.Done()
		if err := d.connectToNetwork("web.1", "overlay-net"); err != nil {
			fmt.Println("connect:", err)
		}
	}()
	time.Sleep(20 * time.Millisecond) // the connect holds the controller lock, waiting on IsAgent

	close(sn.proceed)
	wg.Wait()
	fmt.Println("swarm initialized, agent:", c.IsAgent())
}
