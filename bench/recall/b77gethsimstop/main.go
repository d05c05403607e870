// Project: ethereum/go-ethereum (p2p/simulations/network.go, p2p/simulations/adapters/inproc.go), geth v1.8.x, 2018 (approximate).
// Bug: Network.Stop held net.lock while it called node.Stop(); stopping the simulated node waits for the node's p2p dial loop, and that loop asks the network whether a peer is reachable through the NodeConfig.Reachable closure, which calls net.InitConn and therefore needs net.lock, so Stop and the dial loop wait for each other.
package main

import (
	"fmt"
	"sync"
	"time"
)

type ID string

// NodeConfig mirrors adapters.NodeConfig; Reachable is installed by the Network.
type NodeConfig struct {
	ID        ID
	Reachable func(other ID) bool
}

// Node mirrors adapters.Node, the interface the Network drives.
type Node interface {
	Start() error
	Stop() error
}

// SimNode is the in-process adapter node: a fake p2p server with a dial loop.
type SimNode struct {
	config  *NodeConfig
	targets []ID
	quit    chan struct{}
	loopWG  sync.WaitGroup
}

func (sn *SimNode) Start() error {
	sn.quit = make(chan struct{})
	sn.loopWG.Add(1)
	go sn.dialLoop()
	return nil
}

// dialLoop stands for p2p.Server.run/dialstate.newTasks asking about candidates.
func (sn *SimNode) dialLoop() {
	defer sn.loopWG.Done()
	for {
		select {
		case <-sn.quit:
			return
		case <-time.After(20 * time.Millisecond):
			time.Sleep(50 * time.Millisecond) // discovery table lookup
			for _, t := range sn.targets {
				_ = sn.config.Reachable(t)
			}
		}
	}
}

// Stop shuts the p2p server down and waits for its loops to exit.
func (sn *SimNode) Stop() error { close(sn.quit); sn.loopWG.Wait(); return nil }

// SimulationNode is simulations.Node: the adapter node plus the network's view of it.
type SimulationNode struct {
	Node
	Config *NodeConfig
	upMu   sync.RWMutex
	up     bool
}

func (n *SimulationNode) Up() bool      { n.upMu.RLock(); defer n.upMu.RUnlock(); return n.up }
func (n *SimulationNode) SetUp(up bool) { n.upMu.Lock(); defer n.upMu.Unlock(); n.up = up }

type Conn struct {
	One, Other ID
	Up         bool
	one, other *SimulationNode
}

func (c *Conn) nodesUp() error {
	if !c.one.Up() || !c.other.Up() {
		return fmt.Errorf("%v or %v is not up", c.One, c.Other)
	}
	return nil
}

type Network struct {
	lock    sync.RWMutex
	Nodes   []*SimulationNode
	nodeMap map[ID]int
	Conns   []*Conn
	connMap map[string]int
	events  []string
}

func (net *Network) NewNodeWithConfig(conf *NodeConfig, targets []ID) *SimulationNode {
	net.lock.Lock()
	defer net.lock.Unlock()
	conf.Reachable = func(otherID ID) bool {
		_, err := net.InitConn(conf.ID, otherID)
		return err == nil
	}
	node := &SimulationNode{Node: &SimNode{config: conf, targets: targets}, Config: conf}
	net.nodeMap[conf.ID] = len(net.Nodes)
	net.Nodes = append(net.Nodes, node)
	return node
}

func (net *Network) getNode(id ID) *SimulationNode {
	if i, ok := net.nodeMap[id]; ok {
		return net.Nodes[i]
	}
	return nil // unknown node
}

func (net *Network) Start(id ID) error {
	net.lock.Lock()
	defer net.lock.Unlock()
	node := net.getNode(id)
	if err := node.Start(); err != nil {
		return err
	}
	node.SetUp(true)
	return nil
}

// Stop stops the node with the given ID.
func (net *Network) Stop(id ID) error {
	net.lock.Lock()
	defer net.lock.Unlock()
	node := net.getNode(id)
	if node == nil {
		return fmt.Errorf("node %v does not exist", id)
	}
	if !node.Up() {
		return fmt.Errorf("node %v already down", id)
	}
	if err := node.Stop(); err != nil { // waits for the dial loop with net.lock held
		return err
	}
	node.SetUp(false)
	net.events = append(net.events, "stopped "+string(id))
	return nil
}

// InitConn retrieves (or creates) the connection model between two peers.
func (net *Network) InitConn(oneID, otherID ID) (*Conn, error) {
	net.lock.Lock()
	defer net.lock.Unlock()
	return net.initConn(oneID, otherID)
}

func (net *Network) initConn(oneID, otherID ID) (*Conn, error) {
	if oneID > otherID {
		oneID, otherID = otherID, oneID
	}
	key := string(oneID) + "-" + string(otherID)
	i, ok := net.connMap[key]
	if !ok {
		one, other := net.getNode(oneID), net.getNode(otherID)
		i = len(net.Conns)
		net.connMap[key] = i
		net.Conns = append(net.Conns, &Conn{One: oneID, Other: otherID, one: one, other: other})
	}
	conn := net.Conns[i]
	if conn.Up {
		return nil, fmt.Errorf("conn already up")
	}
	if err := conn.nodesUp(); err != nil {
		return nil, fmt.Errorf("nodes not up: %v", err)
	}
	return conn, nil
}

func main() {
	net := &Network{nodeMap: map[ID]int{}, connMap: map[string]int{}}
	net.NewNodeWithConfig(&NodeConfig{ID: "a"}, []ID{"b"})
	net.NewNodeWithConfig(&NodeConfig{ID: "b"}, []ID{"a"})
	for _, id := range []ID{"a", "b"} {
		_ = net.Start(id)
	}
	time.Sleep(40 * time.Millisecond)
	for _, id := range []ID{"a", "b"} {
		if err := net.Stop(id); err != nil {
			panic(err)
		}
	}
	fmt.Println("network shut down:", net.events)
}
