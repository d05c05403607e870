// Project: ethereum/go-ethereum (les/peer.go serverPeer.HasBlock, les/fetcher.go lightFetcher.registerPeer/announce/peerHasBlock, les/distributor.go, les/odr_requests.go), geth v1.9.12, March 2020 (approximate).
// Bug: serverPeer.HasBlock read-locked p.lock with a deferred RUnlock and,
// still holding it, called the hasBlock hook installed by
// lightFetcher.registerPeer, which is lightFetcher.peerHasBlock and locks
// f.lock. lightFetcher.announce holds f.lock and then takes p.lock to record
// the announced head, so the request distributor checking canSend for an ODR
// request and the peer's announce handler deadlock AB-BA (PR #20828 for issue
// #20793, v1.9.13: copy the fields and the hook under p.lock and call the hook
// after RUnlock).
package main

import (
	"fmt"
	"sync"
	"time"
)

type blockInfo struct {
	Hash   string
	Number uint64
}

type announceData struct {
	Hash   string
	Number uint64
}

// serverPeer represents each node to which the light client is connected.
type serverPeer struct {
	id                      string
	lock                    sync.RWMutex
	headInfo                blockInfo
	chainSince, chainRecent uint64
	hasBlock                func(hash string, number uint64, hasState bool) bool
}

// HasBlock checks if the peer has a given block
func (p *serverPeer) HasBlock(hash string, number uint64, hasState bool) bool {
	p.lock.RLock()
	head := p.headInfo.Number
	since, recent := p.chainSince, p.chainRecent
	hasBlock := p.hasBlock
	p.lock.RUnlock()

	return head >= number && number >= since && (recent == 0 || number+recent+4 > head) && hasBlock != nil && hasBlock(hash, number, hasState)
}

type fetcherTreeNode struct {
	hash   string
	number uint64
	parent *fetcherTreeNode
}

type fetcherPeerInfo struct {
	root, lastAnnounced *fetcherTreeNode
	nodeByHash          map[string]*fetcherTreeNode
}

type lightFetcher struct {
	lock             sync.Mutex
	peers            map[*serverPeer]*fetcherPeerInfo
	syncing          bool
	requestTrigger   chan struct{}
	requestTriggered bool
}

func (f *lightFetcher) registerPeer(p *serverPeer) {
	p.lock.Lock()
	p.hasBlock = func(hash string, number uint64, hasState bool) bool {
		return f.peerHasBlock(p, hash, number, hasState)
	}
	p.lock.Unlock()

	f.lock.Lock()
	defer f.lock.Unlock()
	f.peers[p] = &fetcherPeerInfo{nodeByHash: make(map[string]*fetcherTreeNode)}
}

// announce processes a new announcement message received from a peer.
func (f *lightFetcher) announce(p *serverPeer, head *announceData) {
	f.lock.Lock()
	defer f.lock.Unlock()

	fp := f.peers[p]
	if fp == nil {
		return
	}
	n := &fetcherTreeNode{hash: head.Hash, number: head.Number, parent: fp.lastAnnounced}
	fp.nodeByHash[n.hash] = n
	if fp.root == nil {
		fp.root = n
	}
	f.checkKnownNode(p, n)

	p.lock.Lock()
	p.headInfo = blockInfo{Number: head.Number, Hash: head.Hash}
	fp.lastAnnounced = n
	p.lock.Unlock()
	if !f.requestTriggered {
		f.requestTriggered = true
		f.requestTrigger <- struct{}{}
	}
}

// checkKnownNode checks the canonical chain in the database for the
// announced header; reading headers from leveldb takes a moment.
func (f *lightFetcher) checkKnownNode(p *serverPeer, n *fetcherTreeNode) bool {
	time.Sleep(10 * time.Millisecond)
	return false
}

// peerHasBlock returns true if we can assume the peer knows the given block
// based on its announcements
func (f *lightFetcher) peerHasBlock(p *serverPeer, hash string, number uint64, hasState bool) bool {
	f.lock.Lock()
	defer f.lock.Unlock()

	fp := f.peers[p]
	if fp == nil || fp.root == nil {
		return false
	}
	if f.syncing {
		return true
	}
	if number >= fp.root.number {
		return fp.nodeByHash[hash] != nil
	}
	return false
}

type distReq struct {
	canSend func(*serverPeer) bool
	request func(*serverPeer) func()
}

type requestDistributor struct {
	lock     sync.Mutex
	peers    map[*serverPeer]struct{}
	reqQueue []*distReq
	loopChn  chan struct{}
}

func (d *requestDistributor) queue(r *distReq) {
	d.lock.Lock()
	d.reqQueue = append(d.reqQueue, r)
	d.lock.Unlock()
	d.loopChn <- struct{}{}
}

func (d *requestDistributor) loop() {
	for range d.loopChn {
		d.lock.Lock()
		if p, req, i := d.nextRequest(); req != nil {
			d.reqQueue = append(d.reqQueue[:i], d.reqQueue[i+1:]...)
			go req.request(p)()
		}
		d.lock.Unlock()
	}
}

func (d *requestDistributor) nextRequest() (*serverPeer, *distReq, int) {
	for i, req := range d.reqQueue {
		for peer := range d.peers {
			if req.canSend(peer) {
				return peer, req, i
			}
		}
	}
	return nil, nil, -1
}

// BlockRequest is the ODR request type for retrieving block bodies.
type BlockRequest struct {
	Hash   string
	Number uint64
}

// CanSend tells if a certain peer is suitable for serving the given request
func (r *BlockRequest) CanSend(peer *serverPeer) bool {
	return peer.HasBlock(r.Hash, r.Number, false)
}

func main() {
	p := &serverPeer{id: "a1b2c3d4", headInfo: blockInfo{Hash: "0x100", Number: 100}}
	f := &lightFetcher{peers: make(map[*serverPeer]*fetcherPeerInfo), requestTrigger: make(chan struct{}, 1)}
	d := &requestDistributor{peers: map[*serverPeer]struct{}{p: {}}, loopChn: make(chan struct{}, 16)}
	go d.loop()
	f.registerPeer(p)
	f.announce(p, &announceData{Hash: "0x100", Number: 100})

	// The peer's message loop handles the next announcement.
	go f.announce(p, &announceData{Hash: "0x101", Number: 101})
	time.Sleep(2 * time.Millisecond)

	// Meanwhile an RPC call (eth_getBlockByNumber) triggers an ODR body retrieval.
	body := make(chan string)
	r := &BlockRequest{Hash: "0x100", Number: 100}
	d.queue(&distReq{
		canSend: func(dp *serverPeer) bool { return r.CanSend(dp) },
		request: func(dp *serverPeer) func() {
			return func() { body <- fmt.Sprintf("body of %s from %s", r.Hash, dp.id) }
		},
	})
	fmt.Println(<-body)
}
