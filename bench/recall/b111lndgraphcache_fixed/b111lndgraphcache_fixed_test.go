// Project: lightningnetwork/lnd (channeldb/graph_cache.go GraphCache.ForEachChannel and UpdatePolicy, channeldb/graph.go UpdateEdgePolicy, channeldb/channel.go AdvanceCommitChainTail, lnwallet/channel.go ReceiveRevocation and RemoteNextRevocation, htlcswitch/link.go EligibleToForward, routing/bandwidth.go and routing/pathfind.go getOutgoingBalance), v0.14.0-rc, November 2021 (issue #5914, fixed by PR #5941 "channeldb: avoid locking the graph cache while iterating channels"; the exact three goroutines are reconstructed, approximate).
// Bug: the in-memory graph cache added in v0.14 held its read lock while ForEachChannel ran the path finding callback, and for our own channels the callback asks the switch link for its bandwidth, where EligibleToForward read-locks the LightningChannel. A link processing a revocation holds the LightningChannel lock while it advances the commitment chain in a bbolt write transaction (the database writer mutex), and a gossip policy update holds that writer mutex while UpdateEdgePolicy write-locks the graph cache. Path finding, the link and the router wait on each other in a cycle of three mutexes. The fix copies the node's channels under the cache lock and runs the callbacks after releasing it.
package b111lndgraphcachefixed

import (
	"sync"
	"testing"
	"time"
)

type (
	Vertex         [33]byte
	ShortChannelID uint64
	MilliSatoshi   uint64
)

// boltBackend mimics bbolt: db.rwlock lets only one Update tx run at a time.
type boltBackend struct{ rwlock sync.Mutex }

func (db *boltBackend) Update(f func() error) error {
	db.rwlock.Lock()
	defer db.rwlock.Unlock()
	return f()
}

type ChannelEdgePolicy struct {
	ChannelID, FeeBaseMSat uint64
}

type DirectedChannel struct {
	ChannelID, Capacity uint64
	OtherNode           Vertex
	OutPolicySet        bool
	InPolicy            *ChannelEdgePolicy
}

type GraphCache struct {
	mtx          sync.RWMutex
	nodeChannels map[Vertex]map[uint64]*DirectedChannel
}

func (c *GraphCache) UpdatePolicy(policy *ChannelEdgePolicy, fromNode, toNode Vertex) {
	c.mtx.Lock()
	defer c.mtx.Unlock()
	if ch, ok := c.nodeChannels[toNode][policy.ChannelID]; ok {
		ch.InPolicy = policy
	}
}

// ForEachChannel invokes the given callback for each channel of the given node.
func (c *GraphCache) ForEachChannel(node Vertex, cb func(channel *DirectedChannel) error) error {
	// Copy the node's channels so that no callback runs under the cache lock.
	c.mtx.RLock()
	channels := make([]DirectedChannel, 0, len(c.nodeChannels[node]))
	for _, channel := range c.nodeChannels[node] {
		channels = append(channels, *channel)
	}
	c.mtx.RUnlock()
	for i := range channels {
		if err := cb(&channels[i]); err != nil {
			return err
		}
	}
	return nil
}

type ChannelGraph struct {
	db         *boltBackend
	graphCache *GraphCache
}

func (c *ChannelGraph) UpdateEdgePolicy(edge *ChannelEdgePolicy, from, to Vertex) error {
	return c.db.Update(func() error { // edge bucket write elided
		c.graphCache.UpdatePolicy(edge, from, to)
		return nil
	})
}

type OpenChannel struct {
	Db                   *boltBackend
	RemoteNextRevocation *Vertex
	RemoteCommitHeight   uint64
}

func (c *OpenChannel) AdvanceCommitChainTail(height uint64) error {
	return c.Db.Update(func() error { // revocation log write elided
		c.RemoteCommitHeight = height
		return nil
	})
}

type LightningChannel struct {
	sync.RWMutex
	channelState *OpenChannel
}

type RevokeAndAck struct{ NextRevocationKey Vertex }

func (lc *LightningChannel) ReceiveRevocation(revMsg *RevokeAndAck) error {
	lc.Lock()
	defer lc.Unlock()
	lc.channelState.RemoteNextRevocation = &revMsg.NextRevocationKey
	return lc.channelState.AdvanceCommitChainTail(lc.channelState.RemoteCommitHeight + 1)
}

func (lc *LightningChannel) RemoteNextRevocation() *Vertex {
	lc.RLock()
	defer lc.RUnlock()
	return lc.channelState.RemoteNextRevocation
}

type ChannelLink interface{ EligibleToForward() bool }

type channelLink struct{ channel *LightningChannel }

func (l *channelLink) EligibleToForward() bool { return l.channel.RemoteNextRevocation() != nil }

type bandwidthManager struct {
	getLink    func(ShortChannelID) (ChannelLink, error)
	localChans map[ShortChannelID]struct{}
}

func (b *bandwidthManager) availableChanBandwidth(chanID uint64, _ MilliSatoshi) (MilliSatoshi, bool) {
	if _, ok := b.localChans[ShortChannelID(chanID)]; !ok {
		return 0, false
	}
	link, err := b.getLink(ShortChannelID(chanID))
	if err != nil || !link.EligibleToForward() {
		return 0, true // offline or not yet eligible: no bandwidth
	}
	return 1000, true
}

type routingGraph interface {
	forEachNodeChannel(Vertex, func(*DirectedChannel) error) error
}

type CachedGraph struct{ cache *GraphCache }

func (g *CachedGraph) forEachNodeChannel(n Vertex, cb func(*DirectedChannel) error) error {
	return g.cache.ForEachChannel(n, cb)
}

func getOutgoingBalance(node Vertex, hints *bandwidthManager, g routingGraph) (MilliSatoshi, error) {
	var total MilliSatoshi
	err := g.forEachNodeChannel(node, func(channel *DirectedChannel) error {
		if !channel.OutPolicySet {
			return nil
		}
		bandwidth, ok := hints.availableChanBandwidth(channel.ChannelID, 0)
		if !ok {
			bandwidth = MilliSatoshi(channel.Capacity * 1000)
		}
		total += bandwidth
		return nil
	})
	return total, err
}

func findPath(g routingGraph, hints *bandwidthManager, self Vertex) error {
	_, err := getOutgoingBalance(self, hints, g) // source == self
	return err
}

func TestB111lndgraphcacheFixed(t *testing.T) {
	self, peer, remote := Vertex{1}, Vertex{2}, Vertex{3}
	db := &boltBackend{}
	cache := &GraphCache{nodeChannels: map[Vertex]map[uint64]*DirectedChannel{
		self: {1: {ChannelID: 1, OtherNode: peer, Capacity: 100, OutPolicySet: true}},
		peer: {2: {ChannelID: 2, OtherNode: remote, Capacity: 100, OutPolicySet: true}},
	}}
	graph := &ChannelGraph{db: db, graphCache: cache}
	lc := &LightningChannel{channelState: &OpenChannel{Db: db, RemoteNextRevocation: &Vertex{9}}}

	var once sync.Once
	reached, resume := make(chan struct{}), make(chan struct{})
	hints := &bandwidthManager{
		localChans: map[ShortChannelID]struct{}{1: {}},
		getLink: func(ShortChannelID) (ChannelLink, error) { // Switch.GetLinkByShortID
			once.Do(func() { close(reached); <-resume })
			return &channelLink{channel: lc}, nil
		},
	}
	done := make(chan struct{}, 3)

	go func() { _ = findPath(&CachedGraph{cache}, hints, self); done <- struct{}{} }()
	<-reached // path finding holds the graph cache read lock

	// Router applying a gossiped channel_update.
	go func() { _ = graph.UpdateEdgePolicy(&ChannelEdgePolicy{2, 7}, remote, peer); done <- struct{}{} }()
	time.Sleep(50 * time.Millisecond)
	// Link receiving revoke_and_ack.
	go func() { _ = lc.ReceiveRevocation(&RevokeAndAck{Vertex{10}}); done <- struct{}{} }()
	time.Sleep(50 * time.Millisecond)
	close(resume)

	<-done
	<-done
	<-done
}
