// Project: libp2p/go-libp2p-kbucket v0.6.2 (the Kademlia routing table used by
// go-libp2p-kad-dht v0.24, kubo 0.21).
// Files/functions: table.go (RoutingTable.UsefulNewPeer, Find, NearestPeer,
// NearestPeers, TryAddPeer, bucketIdForPeer); the caller is kad-dht's
// IpfsDHT.peerFound.
// Issue/PR: libp2p/go-libp2p-kbucket PR #122 "fix: fix abba bug in
// UsefullNewPeer" (June 2023).
//
// UsefulNewPeer, added for kad-dht's peerFound so it could skip peers the
// table would not take, read-locks tabLock and then asks rt.Find(p) whether
// the peer is already present. Find goes through NearestPeer to NearestPeers,
// which read-locks tabLock again. When a TryAddPeer from another connection
// asks for the write lock between the two read locks, the RWMutex makes the
// second RLock wait for the writer, and the writer waits for the first
// reader, so the DHT stops adding peers and every later lookup blocks too. The
// fix checks the bucket directly (bucket.getPeer(p)) under the lock it already
// holds.
package main

import (
	"container/list"
	"crypto/sha256"
	"fmt"
	"math/bits"
	"sort"
	"sync"
	"time"
)

type ID []byte

func ConvertPeerID(id string) ID {
	h := sha256.Sum256([]byte(id))
	return h[:]
}

func CommonPrefixLen(a, b ID) int {
	for i := range a {
		if x := a[i] ^ b[i]; x != 0 {
			return i*8 + bits.LeadingZeros8(x)
		}
	}
	return len(a) * 8
}

type PeerInfo struct {
	Id          string
	dhtId       ID
	replaceable bool
}

type bucket struct{ list *list.List }

func newBucket() *bucket { return &bucket{list: list.New()} }

func (b *bucket) getPeer(p string) *PeerInfo {
	for e := b.list.Front(); e != nil; e = e.Next() {
		if e.Value.(*PeerInfo).Id == p {
			return e.Value.(*PeerInfo)
		}
	}
	return nil
}

func (b *bucket) peers() []PeerInfo {
	ps := make([]PeerInfo, 0, b.list.Len())
	for e := b.list.Front(); e != nil; e = e.Next() {
		ps = append(ps, *e.Value.(*PeerInfo))
	}
	return ps
}

func (b *bucket) len() int { return b.list.Len() }

type RoutingTable struct {
	local      ID
	tabLock    sync.RWMutex
	buckets    []*bucket
	bucketsize int
	PeerAdded  func(string)
}

func NewRoutingTable(bucketsize int, local ID) *RoutingTable {
	return &RoutingTable{local: local, buckets: []*bucket{newBucket()}, bucketsize: bucketsize, PeerAdded: func(string) {}}
}

func (rt *RoutingTable) bucketIdForPeer(p string) int {
	bucketID := CommonPrefixLen(ConvertPeerID(p), rt.local)
	if bucketID >= len(rt.buckets) {
		bucketID = len(rt.buckets) - 1
	}
	return bucketID
}

// UsefulNewPeer verifies whether the given peer.ID would be a good fit for the routing table.
func (rt *RoutingTable) UsefulNewPeer(p string) bool {
	rt.tabLock.RLock()
	defer rt.tabLock.RUnlock()

	// bucket corresponding to p
	bucketID := rt.bucketIdForPeer(p)
	bucket := rt.buckets[bucketID]
	time.Sleep(50 * time.Millisecond) // a TryAddPeer from another connection arrives here

	if rt.Find(p) != "" {
		// peer already exists in the routing table, so it isn't useful
		return false
	}
	// bucket isn't full
	if bucket.len() < rt.bucketsize {
		return true
	}
	// bucket is full, check if it contains replaceable peers
	for e := bucket.list.Front(); e != nil; e = e.Next() {
		if e.Value.(*PeerInfo).replaceable {
			return true
		}
	}
	return false
}

// Find a specific peer by ID or return ""
func (rt *RoutingTable) Find(id string) string {
	if p := rt.NearestPeer(ConvertPeerID(id)); p == id {
		return p
	}
	return ""
}

// NearestPeer returns a single peer that is nearest to the given ID
func (rt *RoutingTable) NearestPeer(id ID) string {
	peers := rt.NearestPeers(id, 1)
	if len(peers) > 0 {
		return peers[0]
	}
	return ""
}

// NearestPeers returns a list of the 'count' closest peers to the given ID
func (rt *RoutingTable) NearestPeers(id ID, count int) []string {
	rt.tabLock.RLock()
	defer rt.tabLock.RUnlock()
	var all []PeerInfo
	for _, b := range rt.buckets {
		all = append(all, b.peers()...)
	}
	sort.Slice(all, func(i, j int) bool { return CommonPrefixLen(all[i].dhtId, id) > CommonPrefixLen(all[j].dhtId, id) })
	var out []string
	for i := 0; i < len(all) && i < count; i++ {
		out = append(out, all[i].Id)
	}
	return out
}

// TryAddPeer tries to add a peer to the Routing table.
func (rt *RoutingTable) TryAddPeer(p string, queryPeer bool) (bool, error) {
	rt.tabLock.Lock()
	defer rt.tabLock.Unlock()
	b := rt.buckets[rt.bucketIdForPeer(p)]
	if b.getPeer(p) != nil {
		return false, nil
	}
	if b.len() >= rt.bucketsize {
		return false, fmt.Errorf("peer rejected; insufficient capacity")
	}
	b.list.PushFront(&PeerInfo{Id: p, dhtId: ConvertPeerID(p), replaceable: !queryPeer})
	rt.PeerAdded(p)
	return true, nil
}

type IpfsDHT struct{ routingTable *RoutingTable }

// peerFound verifies whether the found peer advertises DHT protocols and adds it.
func (dht *IpfsDHT) peerFound(p string, queryPeer bool) {
	// if the peer is already in the routing table or the appropriate bucket is
	// already full, don't try to add the new peer.ID
	if !dht.routingTable.UsefulNewPeer(p) {
		return
	}
	_, _ = dht.routingTable.TryAddPeer(p, queryPeer)
}

func main() {
	dht := &IpfsDHT{routingTable: NewRoutingTable(20, ConvertPeerID("12D3KooWLocal"))}
	_, _ = dht.routingTable.TryAddPeer("12D3KooWBoot", true)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); dht.peerFound("12D3KooWFound", false) }()
	time.Sleep(20 * time.Millisecond)
	go func() { defer wg.Done(); _, _ = dht.routingTable.TryAddPeer("12D3KooWInbound", true) }()
	wg.Wait()
	fmt.Println("routing table size:", len(dht.routingTable.NearestPeers(ConvertPeerID("x"), 100)))
}
