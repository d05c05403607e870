// Project: go-libp2p-kbucket (libp2p Kademlia routing table), RoutingTable.TryAddPeer.
// Bug: approximate: TryAddPeer holds rt.tabLock (write) and, when the last bucket is full,
// splits it via nextBucket(); the split path asked the exported NPeersForCpl() whether the new
// bucket is still full, and NPeersForCpl takes rt.tabLock.RLock() -> the goroutine blocks on
// the lock it already holds (and every lookup queues behind it).
// Fix: the locked path uses the unexported lock-free helper (newBucket.len()/nPeersForCpl).
package libp2pkbucket_fixed

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"testing"
	"time"
)

type ID string

var ErrPeerRejectedNoCapacity = errors.New("peer rejected; insufficient capacity")

func ConvertPeerID(id ID) []byte { h := sha256.Sum256([]byte(id)); return h[:] }

func CommonPrefixLen(a, b []byte) int {
	for i := range a {
		if x := a[i] ^ b[i]; x != 0 {
			return i*8 + bits.LeadingZeros8(x)
		}
	}
	return len(a) * 8
}

type PeerInfo struct {
	Id          ID
	dhtId       []byte
	LastSuccess time.Time
}

type bucket struct{ peers []PeerInfo }

func (b *bucket) len() int { return len(b.peers) }
func (b *bucket) getPeer(p ID) *PeerInfo {
	for i := range b.peers {
		if b.peers[i].Id == p {
			return &b.peers[i]
		}
	}
	return nil
}
func (b *bucket) pushFront(p PeerInfo) { b.peers = append([]PeerInfo{p}, b.peers...) }

// split moves every peer whose CPL with target is > cpl into a new bucket.
func (b *bucket) split(cpl int, target []byte) *bucket {
	out := &bucket{}
	var keep []PeerInfo
	for _, p := range b.peers {
		if CommonPrefixLen(p.dhtId, target) > cpl {
			out.peers = append(out.peers, p)
		} else {
			keep = append(keep, p)
		}
	}
	b.peers = keep
	return out
}

type RoutingTable struct {
	local      []byte
	tabLock    sync.RWMutex
	buckets    []*bucket
	bucketsize int
	PeerAdded  func(ID)
}

func NewRoutingTable(bucketsize int, local ID) *RoutingTable {
	return &RoutingTable{local: ConvertPeerID(local), buckets: []*bucket{{}}, bucketsize: bucketsize, PeerAdded: func(ID) {}}
}

func (rt *RoutingTable) TryAddPeer(p ID) (bool, error) {
	rt.tabLock.Lock()
	defer rt.tabLock.Unlock()
	return rt.addPeer(p)
}

// addPeer requires rt.tabLock to be held for writing.
func (rt *RoutingTable) addPeer(p ID) (bool, error) {
	bucketID := rt.bucketIdForPeer(p)
	b := rt.buckets[bucketID]
	if b.getPeer(p) != nil {
		return false, nil
	}
	pi := PeerInfo{Id: p, dhtId: ConvertPeerID(p), LastSuccess: time.Now()}
	if b.len() < rt.bucketsize {
		b.pushFront(pi)
		rt.PeerAdded(p)
		return true, nil
	}
	if bucketID == len(rt.buckets)-1 {
		rt.nextBucket()
		b = rt.buckets[rt.bucketIdForPeer(p)]
		if b.len() < rt.bucketsize {
			b.pushFront(pi)
			rt.PeerAdded(p)
			return true, nil
		}
	}
	return false, ErrPeerRejectedNoCapacity
}

func (rt *RoutingTable) nextBucket() {
	last := rt.buckets[len(rt.buckets)-1]
	newBucket := last.split(len(rt.buckets)-1, rt.local)
	rt.buckets = append(rt.buckets, newBucket)
	// If all elements were on the same side of the split, keep splitting.
	if rt.nPeersForCpl(uint(len(rt.buckets)-1)) >= rt.bucketsize {
		rt.nextBucket()
	}
}

func (rt *RoutingTable) bucketIdForPeer(p ID) int {
	cpl := CommonPrefixLen(ConvertPeerID(p), rt.local)
	if cpl >= len(rt.buckets) {
		cpl = len(rt.buckets) - 1
	}
	return cpl
}

// NPeersForCpl returns the number of peers with the given cpl.
func (rt *RoutingTable) NPeersForCpl(cpl uint) int {
	rt.tabLock.RLock()
	defer rt.tabLock.RUnlock()
	return rt.nPeersForCpl(cpl)
}

func (rt *RoutingTable) nPeersForCpl(cpl uint) int {
	if int(cpl) >= len(rt.buckets)-1 {
		n := 0
		for _, p := range rt.buckets[len(rt.buckets)-1].peers {
			if CommonPrefixLen(p.dhtId, rt.local) == int(cpl) {
				n++
			}
		}
		return n
	}
	return rt.buckets[cpl].len()
}

func (rt *RoutingTable) Size() int {
	rt.tabLock.RLock()
	defer rt.tabLock.RUnlock()
	n := 0
	for _, b := range rt.buckets {
		n += b.len()
	}
	return n
}

func TestRoutingTableSplitDeadlock(t *testing.T) {
	rt := NewRoutingTable(2, "QmLocal")
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // DHT network notifee: peers connecting
		defer wg.Done()
		for i := 0; i < 16; i++ {
			if _, err := rt.TryAddPeer(ID(fmt.Sprintf("QmPeer%d", i))); err != nil {
				t.Logf("add: %v", err)
			}
		}
	}()
	go func() { // refresh manager polling table size
		defer wg.Done()
		for i := 0; i < 5; i++ {
			time.Sleep(5 * time.Millisecond)
			t.Logf("table size %d", rt.Size())
		}
	}()
	wg.Wait()
}
