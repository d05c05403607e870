// Project: cockroachdb/cockroach (pkg/gossip/gossip.go, pkg/sql/crdb_internal.go)
// Issue: PR #30264 "gossip,sql: avoid deadlocking in crdb_internal.gossip_nodes"
// (the double read lock was introduced by #30081 "cli: improve node status
// output"; backported together in #30268).
//
// Bug: Gossip.IterateInfos takes g.mu.RLock (line 131) and keeps it, via
// defer, while it runs the caller's visit closure for every info under the
// prefix. The populate function of crdb_internal.gossip_nodes passes a visit
// closure that, for every node descriptor, looks up the node's gossiped
// liveness record with g.GetInfoProto -> g.GetInfo, which read-locks
// g.mu again (line 109). Recursive read locking is fine as long as nobody
// writes, but when a gossip update arrives in between (here a node
// liveness heartbeat, Gossip.AddInfoProto -> AddInfo -> g.mu.Lock at line
// 88), the writer waits for the outer read lock to go away and the second
// RLock (line 109) queues behind the writer: the SQL goroutine waits for the
// writer, the writer waits for the SQL goroutine.
//
// The reconstruction keeps the real names (Gossip.mu embedded RWMutex with the
// infoStore, IterateInfos/GetInfo/GetInfoProto/AddInfo/AddInfoProto, the
// gossip key helpers) and the visit-closure call chain; protobuf values are
// JSON here; the visit closure's liveness lookup is rebuilt from the PR text.
// main() uses a testing knob (cockroach's TestingKnobs style) to
// let the liveness heartbeat queue its write lock between the two read locks.
package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

// NodeID is a roachpb.NodeID.
type NodeID int32

func (n NodeID) String() string { return fmt.Sprintf("%d", int32(n)) }

const (
	separator             = ":"
	KeyNodeIDPrefix       = "node"
	KeyNodeLivenessPrefix = "liveness"
)

// MakeKey creates a canonical key under which to gossip a piece of information.
func MakeKey(components ...string) string { return strings.Join(components, separator) }

// MakeNodeIDKey returns the gossip key for node ID info.
func MakeNodeIDKey(nodeID NodeID) string { return MakeKey(KeyNodeIDPrefix, nodeID.String()) }

// MakeNodeLivenessKey returns the gossip key for node liveness info.
func MakeNodeLivenessKey(nodeID NodeID) string {
	return MakeKey(KeyNodeLivenessPrefix, nodeID.String())
}

// Info is the basic unit of information traded over the gossip network.
type Info struct {
	Value []byte
}

type infoStore struct {
	Infos map[string]*Info
}

func (is *infoStore) getInfo(key string) *Info { return is.Infos[key] }

func (is *infoStore) addInfo(key string, i *Info) error {
	is.Infos[key] = i
	return nil
}

// Gossip is an instance of a gossip node.
type Gossip struct {
	mu struct {
		sync.RWMutex
		is *infoStore
	}
}

func NewTest() *Gossip {
	g := &Gossip{}
	g.mu.is = &infoStore{Infos: map[string]*Info{}}
	return g
}

// AddInfo adds or updates an info object.
func (g *Gossip) AddInfo(key string, val []byte) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.addInfoLocked(key, val)
}

func (g *Gossip) addInfoLocked(key string, val []byte) error {
	return g.mu.is.addInfo(key, &Info{Value: val})
}

// AddInfoProto adds or updates an info object.
func (g *Gossip) AddInfoProto(key string, msg interface{}) error {
	bytes, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	return g.AddInfo(key, bytes)
}

// GetInfo returns an info value by key or an KeyNotPresentError if specified
// key does not exist or has expired.
func (g *Gossip) GetInfo(key string) ([]byte, error) {
	g.mu.RLock()
	i := g.mu.is.getInfo(key)
	g.mu.RUnlock()

	if i != nil {
		return i.Value, nil
	}
	return nil, fmt.Errorf("KeyNotPresentError: %q", key)
}

// GetInfoProto returns an info value by key or KeyNotPresentError if specified
// key does not exist or has expired.
func (g *Gossip) GetInfoProto(key string, msg interface{}) error {
	bytes, err := g.GetInfo(key)
	if err != nil {
		return err
	}
	return json.Unmarshal(bytes, msg)
}

// IterateInfos visits all infos matching the given prefix.
func (g *Gossip) IterateInfos(prefix string, visit func(k string, info Info) error) error {
	g.mu.RLock()
	defer g.mu.RUnlock()
	for k, v := range g.mu.is.Infos {
		if strings.HasPrefix(k, prefix+separator) {
			if err := visit(k, *v); err != nil {
				return err
			}
		}
	}
	return nil
}

// ---- pkg/storage/storagepb and pkg/roachpb ----

type NodeDescriptor struct {
	NodeID  NodeID
	Address string
}

type Liveness struct {
	NodeID          NodeID
	Epoch           int64
	Draining        bool
	Decommissioning bool
}

// ---- pkg/sql/crdb_internal.go ----

// ExecutorTestingKnobs is the sql executor's testing knob struct.
type ExecutorTestingKnobs struct {
	// BeforeGossipLivenessLookup is called before the gossip_nodes generator
	// looks up a node's liveness record.
	BeforeGossipLivenessLookup func()
}

type planner struct {
	gossip *Gossip
	knobs  *ExecutorTestingKnobs
}

// crdbInternalGossipNodesTable.populate: locally known gossiped node details.
func populateGossipNodes(p *planner, addRow func(d NodeDescriptor, l Liveness) error) error {
	g := p.gossip
	// Fix (#30264): collect the descriptors under IterateInfos' read lock and
	// look the liveness records up only after it has been released.
	var descriptors []NodeDescriptor
	if err := g.IterateInfos(KeyNodeIDPrefix, func(key string, i Info) error {
		var d NodeDescriptor
		if err := json.Unmarshal(i.Value, &d); err != nil {
			return fmt.Errorf("failed to parse value for key %q: %v", key, err)
		}
		// Don't use node descriptors with NodeID 0, because that's meant to
		// indicate that the node has been removed from the cluster.
		if d.NodeID != 0 {
			descriptors = append(descriptors, d)
		}
		return nil
	}); err != nil {
		return err
	}
	for _, d := range descriptors {
		if fn := p.knobs.BeforeGossipLivenessLookup; fn != nil {
			fn()
		}
		var gossipLiveness Liveness
		if err := g.GetInfoProto(MakeNodeLivenessKey(d.NodeID), &gossipLiveness); err != nil {
			gossipLiveness = Liveness{NodeID: d.NodeID}
		}
		if err := addRow(d, gossipLiveness); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	g := NewTest()
	_ = g.AddInfoProto(MakeNodeIDKey(1), &NodeDescriptor{NodeID: 1, Address: "n1:26257"})
	_ = g.AddInfoProto(MakeNodeLivenessKey(1), &Liveness{NodeID: 1, Epoch: 1})

	inLookup := make(chan struct{})
	heartbeatQueued := make(chan struct{})
	p := &planner{gossip: g, knobs: &ExecutorTestingKnobs{
		BeforeGossipLivenessLookup: func() {
			close(inLookup)
			<-heartbeatQueued
		},
	}}

	var wg sync.WaitGroup
	wg.Add(2)
	// SELECT * FROM crdb_internal.gossip_nodes
	go func() {
		defer wg.Done()
		_ = populateGossipNodes(p, func(d NodeDescriptor, l Liveness) error {
			fmt.Printf("node %d at %s epoch %d\n", d.NodeID, d.Address, l.Epoch)
			return nil
		})
	}()
	<-inLookup
	// NodeLiveness heartbeat gossips the updated liveness record.
	go func() {
		defer wg.Done()
		_ = g.AddInfoProto(MakeNodeLivenessKey(1), &Liveness{NodeID: 1, Epoch: 2})
	}()
	time.Sleep(20 * time.Millisecond) // let the heartbeat queue on g.mu.Lock
	close(heartbeatQueued)
	wg.Wait()
	fmt.Println("done")
}
