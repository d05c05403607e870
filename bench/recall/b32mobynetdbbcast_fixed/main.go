// Project: moby/moby (libnetwork/networkdb: networkdb.go, cluster.go, broadcast.go, delegate.go,
// event_delegate.go) with hashicorp/memberlist (queue.go, state.go)
// Issue: moby/moby#50344 "libnetwork/networkdb: fix broadcast queue deadlocks" (regression from
// moby/moby#50193).
//
// Bug: NetworkDB.JoinNetwork write-locks the NetworkDB RWMutex (nDB.Lock(), line 472) and, still
// holding it, enqueues the join event with sendNetworkEvent -> TransmitLimitedQueue.QueueBroadcast,
// which locks the queue's mutex (q.mu.Lock(), line 65). memberlist's gossip goroutine calls the
// NetworkDB delegate's GetBroadcasts (through the memberlist.Delegate interface); the queue's
// GetBroadcasts locks q.mu (line 91) and calls the queue's NumNodes func field, which NetworkDB
// set in clusterInit to a closure that read-locks the NetworkDB RWMutex (nDB.RLock(), line 353) to
// take len(nDB.nodes). NetworkDB lock -> queue lock on the joining goroutine against queue lock ->
// NetworkDB read lock on the gossip goroutine: with a join and a gossip round overlapping, both
// block forever. The fix keeps an atomic estimate of the node counts (estNodes, and per network
// networkNodes) so the NumNodes callbacks take no lock.
// (No network I/O: main overlaps a join/leave loop with a loop of gossip rounds until they meet.)
package main

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"
)

// ---- hashicorp/memberlist ----

// Broadcast is something that can be broadcasted via gossip to the memberlist cluster.
type Broadcast interface {
	Invalidates(b Broadcast) bool
	Message() []byte
	Finished()
}

type limitedBroadcast struct {
	transmits int
	msgLen    int64
	id        int64
	b         Broadcast
}

// TransmitLimitedQueue is used to queue messages to broadcast to the cluster (via gossip) but
// limits the number of transmits per message.
type TransmitLimitedQueue struct {
	// NumNodes returns the number of nodes in the cluster. This is used to determine the
	// retransmit count, which is calculated based on the log of this.
	NumNodes func() int

	// RetransmitMult is the multiplier used to determine the maximum number of retransmissions
	// attempted.
	RetransmitMult int

	mu    sync.Mutex
	tq    []*limitedBroadcast
	idGen int64
}

// QueueBroadcast is used to enqueue a broadcast
func (q *TransmitLimitedQueue) QueueBroadcast(b Broadcast) {
	q.queueBroadcast(b, 0)
}

func (q *TransmitLimitedQueue) queueBroadcast(b Broadcast, initialTransmits int) {
	q.mu.Lock()
	defer q.mu.Unlock()

	q.idGen++
	lb := &limitedBroadcast{
		transmits: initialTransmits,
		msgLen:    int64(len(b.Message())),
		id:        q.idGen,
		b:         b,
	}

	// Slow path: check every queued broadcast for invalidation.
	kept := q.tq[:0]
	for _, cur := range q.tq {
		if b.Invalidates(cur.b) {
			cur.b.Finished()
			continue
		}
		kept = append(kept, cur)
	}
	q.tq = append(kept, lb)
}

// GetBroadcasts is used to get a number of broadcasts, up to a byte limit and applying a
// per-message overhead as provided.
func (q *TransmitLimitedQueue) GetBroadcasts(overhead, limit int) [][]byte {
	q.mu.Lock()
	defer q.mu.Unlock()

	// Fast path the default case
	if len(q.tq) == 0 {
		return nil
	}

	transmitLimit := retransmitLimit(q.RetransmitMult, q.NumNodes())

	// Visit fresher items first, but only look at stuff that will fit.
	sort.SliceStable(q.tq, func(i, j int) bool { return q.tq[i].transmits < q.tq[j].transmits })
	bytesUsed := 0
	var toSend [][]byte
	kept := q.tq[:0]
	for _, lb := range q.tq {
		if int64(bytesUsed+overhead)+lb.msgLen > int64(limit) {
			kept = append(kept, lb)
			continue
		}
		msg := lb.b.Message()
		bytesUsed += overhead + len(msg)
		toSend = append(toSend, msg)

		// Check if we should stop transmission
		lb.transmits++
		if lb.transmits >= transmitLimit {
			lb.b.Finished()
			continue
		}
		kept = append(kept, lb)
	}
	q.tq = kept
	return toSend
}

// retransmitLimit computes the limit of retransmissions
func retransmitLimit(retransmitMult, n int) int {
	nodeScale := math.Ceil(math.Log10(float64(n + 1)))
	limit := retransmitMult * int(nodeScale)
	return limit
}

// Delegate is the interface that clients must implement if they want to hook into the gossip
// layer of Memberlist.
type Delegate interface {
	NodeMeta(limit int) []byte
	NotifyMsg([]byte)
	GetBroadcasts(overhead, limit int) [][]byte
	LocalState(join bool) []byte
	MergeRemoteState(buf []byte, join bool)
}

// EventDelegate is a simpler delegate that is used only to receive notifications about members
// joining and leaving.
type EventDelegate interface {
	NotifyJoin(*Node)
	NotifyLeave(*Node)
	NotifyUpdate(*Node)
}

type Node struct {
	Name string
	Addr string
}

type MemberlistConfig struct {
	Name           string
	GossipNodes    int
	UDPBufferSize  int
	RetransmitMult int
	Delegate       Delegate
	Events         EventDelegate
}

type Memberlist struct {
	config     *MemberlistConfig
	numNodes   uint32
	nodeLock   sync.RWMutex
	nodes      []*Node
	broadcasts *TransmitLimitedQueue
	sentBytes  int
}

const (
	compoundHeaderOverhead = 2
	compoundOverhead       = 2
	userMsgOverhead        = 1
)

func Create(conf *MemberlistConfig) (*Memberlist, error) {
	m := &Memberlist{config: conf, nodes: []*Node{{Name: conf.Name}}, numNodes: 1}
	m.broadcasts = &TransmitLimitedQueue{
		NumNodes:       m.estNumNodes,
		RetransmitMult: conf.RetransmitMult,
	}
	return m, nil
}

func (m *Memberlist) estNumNodes() int {
	return int(atomic.LoadUint32(&m.numNodes))
}

// aliveNode is invoked by the network layer when we get a message about a live node.
func (m *Memberlist) aliveNode(n *Node) {
	m.nodeLock.Lock()
	m.nodes = append(m.nodes, n)
	atomic.AddUint32(&m.numNodes, 1)
	m.nodeLock.Unlock()

	if m.config.Events != nil {
		m.config.Events.NotifyJoin(n)
	}
}

// gossip is invoked every GossipInterval period to broadcast our gossip messages to a few
// random nodes.
func (m *Memberlist) gossip() {
	m.nodeLock.RLock()
	kNodes := make([]*Node, 0, m.config.GossipNodes)
	for _, n := range m.nodes {
		if n.Name != m.config.Name && len(kNodes) < m.config.GossipNodes {
			kNodes = append(kNodes, n)
		}
	}
	m.nodeLock.RUnlock()

	// Compute the bytes available
	bytesAvail := m.config.UDPBufferSize - compoundHeaderOverhead

	for range kNodes {
		// Get any pending broadcasts
		msgs := m.getBroadcasts(compoundOverhead, bytesAvail)
		if len(msgs) == 0 {
			return
		}
		// (the compound message would be sent to the node here)
		for _, msg := range msgs {
			m.sentBytes += len(msg)
		}
	}
}

// getBroadcasts is used to return a slice of broadcasts to send up to a maximum byte size,
// while imposing a per-broadcast overhead.
func (m *Memberlist) getBroadcasts(overhead, limit int) [][]byte {
	// Get memberlist messages first
	toSend := m.broadcasts.GetBroadcasts(overhead, limit)

	// Check if the user has anything to broadcast
	d := m.config.Delegate
	if d != nil {
		// Determine the bytes used already
		bytesUsed := 0
		for _, msg := range toSend {
			bytesUsed += len(msg) + overhead
		}

		// Check space remaining for user messages
		avail := limit - bytesUsed
		if avail > overhead+userMsgOverhead {
			userMsgs := d.GetBroadcasts(overhead+userMsgOverhead, avail)
			toSend = append(toSend, userMsgs...)
		}
	}
	return toSend
}

// ---- libnetwork/networkdb ----

type LamportTime uint64

type LamportClock struct{ counter uint64 }

func (l *LamportClock) Increment() LamportTime {
	return LamportTime(atomic.AddUint64(&l.counter, 1))
}

type Config struct {
	NodeID         string
	Hostname       string
	PacketBuffer   int
	RetransmitMult int
}

type node struct {
	Node
	ltime LamportTime
}

// network describes the node/network attachment.
type network struct {
	ltime   LamportTime
	leaving bool
}

// thisNodeNetwork describes a network attachment on the local node.
type thisNodeNetwork struct {
	network

	inSync bool

	// The broadcast queue for this network's table event gossip for entries owned by this node.
	tableBroadcasts *TransmitLimitedQueue

	// The broadcast queue for this network's table event gossip relayed from other nodes.
	tableRebroadcasts *TransmitLimitedQueue

	// An approximation of len(nDB.networkNodes[nid]) that can be accessed without
	// synchronization.
	networkNodes atomic.Int32
}

// NetworkDB instance drives the networkdb cluster and acts the broker for cluster-scoped and
// network-scoped gossip and watches.
type NetworkDB struct {
	// Global lamport clock for node network attach events.
	networkClock LamportClock

	sync.RWMutex

	config *Config

	memberlist *Memberlist

	// List of all peer nodes in the cluster not-limited to any network.
	nodes map[string]*node

	// An approximation of len(nodes) that can be accessed without synchronization.
	estNodes atomic.Int32

	// A multi-dimensional map of network/node attachments for peer nodes.
	networks map[string]map[string]*network

	// A map of this node's network attachments.
	thisNodeNetworks map[string]*thisNodeNetwork

	// A map of nodes which are participating in a given network. The key is a network ID.
	networkNodes map[string][]string

	// Broadcast queue for network event gossip.
	networkBroadcasts *TransmitLimitedQueue

	// Broadcast queue for node event gossip.
	nodeBroadcasts *TransmitLimitedQueue
}

func newNetworkDB(c *Config) *NetworkDB {
	return &NetworkDB{
		config:           c,
		nodes:            make(map[string]*node),
		networks:         make(map[string]map[string]*network),
		thisNodeNetworks: make(map[string]*thisNodeNetwork),
		networkNodes:     make(map[string][]string),
	}
}

func (nDB *NetworkDB) clusterInit() error {
	config := &MemberlistConfig{
		Name:           nDB.config.NodeID,
		GossipNodes:    3,
		UDPBufferSize:  nDB.config.PacketBuffer,
		RetransmitMult: nDB.config.RetransmitMult,
	}
	config.Delegate = &delegate{nDB: nDB}
	config.Events = &eventDelegate{nDB: nDB}

	nDB.networkBroadcasts = &TransmitLimitedQueue{
		NumNodes: func() int {
			return int(nDB.estNodes.Load())
		},
		RetransmitMult: config.RetransmitMult,
	}

	nDB.nodeBroadcasts = &TransmitLimitedQueue{
		NumNodes: func() int {
			return int(nDB.estNodes.Load())
		},
		RetransmitMult: config.RetransmitMult,
	}

	mlist, err := Create(config)
	if err != nil {
		return fmt.Errorf("failed to create memberlist: %v", err)
	}

	nDB.Lock()
	nDB.memberlist = mlist
	nDB.nodes[nDB.config.NodeID] = &node{Node: Node{Name: nDB.config.NodeID}}
	nDB.estNodes.Store(int32(len(nDB.nodes)))
	nDB.Unlock()
	return nil
}

// ---- broadcast.go ----

type NetworkEventType int

const (
	NetworkEventTypeJoin NetworkEventType = iota + 1
	NetworkEventTypeLeave
)

type networkEventMessage struct {
	id   string
	node string
	msg  []byte
}

func (m *networkEventMessage) Invalidates(other Broadcast) bool {
	otherm, ok := other.(*networkEventMessage)
	return ok && m.id == otherm.id && m.node == otherm.node
}

func (m *networkEventMessage) Message() []byte {
	return m.msg
}

func (m *networkEventMessage) Finished() {
}

func encodeMessage(event NetworkEventType, ltime LamportTime, nodeName, nid string) ([]byte, error) {
	return []byte(fmt.Sprintf("network-event %d %d %s %s", event, ltime, nodeName, nid)), nil
}

func (nDB *NetworkDB) sendNetworkEvent(nid string, event NetworkEventType, ltime LamportTime) error {
	raw, err := encodeMessage(event, ltime, nDB.config.NodeID, nid)
	if err != nil {
		return err
	}

	nDB.networkBroadcasts.QueueBroadcast(&networkEventMessage{
		msg:  raw,
		id:   nid,
		node: nDB.config.NodeID,
	})
	return nil
}

// ---- delegate.go / event_delegate.go ----

type delegate struct {
	nDB *NetworkDB
}

func (d *delegate) NodeMeta(limit int) []byte { return []byte{} }

func (d *delegate) NotifyMsg(buf []byte) {}

func (d *delegate) GetBroadcasts(overhead, limit int) [][]byte {
	msgs := d.nDB.networkBroadcasts.GetBroadcasts(overhead, limit)
	msgs = append(msgs, d.nDB.nodeBroadcasts.GetBroadcasts(overhead, limit)...)
	return msgs
}

func (d *delegate) LocalState(join bool) []byte { return nil }

func (d *delegate) MergeRemoteState(buf []byte, isJoin bool) {}

type eventDelegate struct {
	nDB *NetworkDB
}

func (e *eventDelegate) NotifyJoin(mn *Node) {
	e.nDB.Lock()
	defer e.nDB.Unlock()
	e.nDB.nodes[mn.Name] = &node{Node: *mn}
	e.nDB.estNodes.Store(int32(len(e.nDB.nodes)))
}

func (e *eventDelegate) NotifyLeave(mn *Node) {
	e.nDB.Lock()
	defer e.nDB.Unlock()
	delete(e.nDB.nodes, mn.Name)
	e.nDB.estNodes.Store(int32(len(e.nDB.nodes)))
}

func (e *eventDelegate) NotifyUpdate(n *Node) {}

// ---- networkdb.go ----

// JoinNetwork joins this node to a given network and propagates this event across the cluster.
func (nDB *NetworkDB) JoinNetwork(nid string) error {
	ltime := nDB.networkClock.Increment()

	nDB.Lock()
	n, ok := nDB.thisNodeNetworks[nid]
	if ok {
		if !n.leaving {
			nDB.Unlock()
			return fmt.Errorf("networkdb: network %s is already joined", nid)
		}
		n.network = network{ltime: ltime}
		n.inSync = false
	} else {
		n = &thisNodeNetwork{
			network: network{ltime: ltime},
			tableBroadcasts: &TransmitLimitedQueue{
				RetransmitMult: 4,
			},
			tableRebroadcasts: &TransmitLimitedQueue{
				RetransmitMult: 4,
			},
		}
		numNodes := func() int { return int(n.networkNodes.Load()) }
		n.tableBroadcasts.NumNodes = numNodes
		n.tableRebroadcasts.NumNodes = numNodes
	}
	nDB.addNetworkNode(nid, nDB.config.NodeID)

	if err := nDB.sendNetworkEvent(nid, NetworkEventTypeJoin, ltime); err != nil {
		nDB.Unlock()
		return fmt.Errorf("failed to send join network event for %s: %v", nid, err)
	}

	networkNodes := nDB.networkNodes[nid]
	n.networkNodes.Store(int32(len(networkNodes)))
	nDB.thisNodeNetworks[nid] = n
	nDB.Unlock()

	if _, err := nDB.bulkSync(networkNodes, true); err != nil {
		fmt.Printf("Error bulk syncing while joining network %s: %v\n", nid, err)
	}

	// Mark the network as being synced
	nDB.Lock()
	n.inSync = true
	nDB.Unlock()

	return nil
}

// LeaveNetwork leaves this node from a given network and propagates this event across the
// cluster.
func (nDB *NetworkDB) LeaveNetwork(nid string) error {
	ltime := nDB.networkClock.Increment()
	if err := nDB.sendNetworkEvent(nid, NetworkEventTypeLeave, ltime); err != nil {
		return fmt.Errorf("failed to send leave network event for %s: %v", nid, err)
	}

	nDB.Lock()
	defer nDB.Unlock()

	// Remove myself from the list of the nodes participating to the network
	nDB.deleteNetworkNode(nid, nDB.config.NodeID)

	n, ok := nDB.thisNodeNetworks[nid]
	if !ok {
		return fmt.Errorf("could not find network %s while trying to leave", nid)
	}

	n.ltime = ltime
	n.leaving = true
	return nil
}

// bulkSync syncs the network's table entries with the given nodes (no peers in this program).
func (nDB *NetworkDB) bulkSync(nodes []string, all bool) ([]string, error) {
	var synced []string
	for _, nodeName := range nodes {
		if nodeName == nDB.config.NodeID {
			continue
		}
		synced = append(synced, nodeName)
	}
	return synced, nil
}

// addNetworkNode adds the node to the list of nodes which participate in the passed network
// only if it is not already present. Caller should hold the NetworkDB lock while calling this
func (nDB *NetworkDB) addNetworkNode(nid string, nodeName string) {
	nodes := nDB.networkNodes[nid]
	for _, node := range nodes {
		if node == nodeName {
			return
		}
	}

	nDB.networkNodes[nid] = append(nDB.networkNodes[nid], nodeName)
	if n, ok := nDB.thisNodeNetworks[nid]; ok {
		n.networkNodes.Store(int32(len(nDB.networkNodes[nid])))
	}
}

// Deletes the node from the list of nodes which participate in the passed network. Caller
// should hold the NetworkDB lock while calling this
func (nDB *NetworkDB) deleteNetworkNode(nid string, nodeName string) {
	nodes, ok := nDB.networkNodes[nid]
	if !ok || len(nodes) == 0 {
		return
	}
	newNodes := make([]string, 0, len(nodes)-1)
	for _, name := range nodes {
		if name == nodeName {
			continue
		}
		newNodes = append(newNodes, name)
	}
	nDB.networkNodes[nid] = newNodes
	if n, ok := nDB.thisNodeNetworks[nid]; ok {
		n.networkNodes.Store(int32(len(newNodes)))
	}
}

const rounds = 200000

func main() {
	nDB := newNetworkDB(&Config{NodeID: "node1", Hostname: "host1", PacketBuffer: 1400, RetransmitMult: 4})
	if err := nDB.clusterInit(); err != nil {
		fmt.Println(err)
		return
	}
	// A second manager joins the gossip cluster.
	nDB.memberlist.aliveNode(&Node{Name: "node2", Addr: "10.0.0.2"})

	// memberlist's gossip timer fires while services come and go on this node: every task
	// start/stop attaches this node to the overlay network or detaches it.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < rounds; i++ {
			nDB.memberlist.gossip()
		}
	}()

	for i := 0; i < rounds; i++ {
		if err := nDB.JoinNetwork("overlay1"); err != nil {
			fmt.Println(err)
			return
		}
		if err := nDB.LeaveNetwork("overlay1"); err != nil {
			fmt.Println(err)
			return
		}
	}
	wg.Wait()
	fmt.Println("gossiped", nDB.memberlist.sentBytes, "bytes")
}
