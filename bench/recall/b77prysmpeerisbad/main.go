// Project: prysmaticlabs/prysm (beacon-chain/p2p/peers/status.go, beacon-chain/p2p/peers/scorers/service.go, bad_responses.go, peerdata/store.go), v1.x, 2020-2021 (approximate).
// Bug: Status.IsBad took p.store.RLock and then asked the scorers service p.scorers.IsBadPeer(pid), which read-locks the same shared peerdata.Store again; a concurrent writer on the store (SetConnectionState from a libp2p connection handler) queues between the two read locks and the nested RLock blocks, deadlocking the peer-status readers and writers.
package main

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

type PeerID string

type PeerConnectionState int

const (
	PeerDisconnected PeerConnectionState = iota
	PeerConnecting
	PeerConnected
	PeerDisconnecting
)

// PeerData mirrors peerdata.PeerData.
type PeerData struct {
	Address                   string
	ConnState                 PeerConnectionState
	BadResponses              int
	ChainStateValidationError error
}

// Store mirrors peerdata.Store: one RWMutex shared by peers.Status and every scorer.
type Store struct {
	sync.RWMutex
	peers map[PeerID]*PeerData
}

// PeerData returns data for the peer, the caller must hold the store lock.
func (s *Store) PeerData(pid PeerID) (*PeerData, bool) {
	d, ok := s.peers[pid]
	return d, ok
}

func (s *Store) PeerDataGetOrCreate(pid PeerID) *PeerData {
	if d, ok := s.peers[pid]; ok {
		return d
	}
	d := &PeerData{}
	s.peers[pid] = d
	return d
}

// BadResponsesScorer mirrors scorers.BadResponsesScorer.
type BadResponsesScorer struct {
	store     *Store
	threshold int
}

func (s *BadResponsesScorer) IsBadPeer(pid PeerID) bool {
	s.store.RLock()
	defer s.store.RUnlock()
	return s.isBadPeer(pid)
}

func (s *BadResponsesScorer) isBadPeer(pid PeerID) bool {
	if d, ok := s.store.PeerData(pid); ok {
		return d.BadResponses >= s.threshold
	}
	return false
}

// PeerStatusScorer mirrors scorers.PeerStatusScorer.
type PeerStatusScorer struct{ store *Store }

func (s *PeerStatusScorer) isBadPeer(pid PeerID) bool {
	if d, ok := s.store.PeerData(pid); ok {
		return d.ChainStateValidationError != nil
	}
	return false
}

// ScorersService mirrors scorers.Service.
type ScorersService struct {
	store   *Store
	scorers struct {
		badResponsesScorer *BadResponsesScorer
		peerStatusScorer   *PeerStatusScorer
	}
}

func NewScorersService(store *Store) *ScorersService {
	s := &ScorersService{store: store}
	s.scorers.badResponsesScorer = &BadResponsesScorer{store: store, threshold: 6}
	s.scorers.peerStatusScorer = &PeerStatusScorer{store: store}
	return s
}

// IsBadPeer traverses all the scorers to see if any of them classifies peer as bad.
func (s *ScorersService) IsBadPeer(pid PeerID) bool {
	s.store.RLock()
	defer s.store.RUnlock()
	return s.scorers.badResponsesScorer.isBadPeer(pid) || s.scorers.peerStatusScorer.isBadPeer(pid)
}

// Status mirrors peers.Status.
type Status struct {
	store     *Store
	scorers   *ScorersService
	ipTracker map[string]int
	ipLimit   int
}

func NewStatus() *Status {
	store := &Store{peers: map[PeerID]*PeerData{}}
	return &Status{store: store, scorers: NewScorersService(store), ipTracker: map[string]int{}, ipLimit: 5}
}

// Add adds a peer. If a peer already exists with this ID its address and direction are updated.
func (p *Status) Add(pid PeerID, address string) {
	p.store.Lock()
	defer p.store.Unlock()
	d := p.store.PeerDataGetOrCreate(pid)
	d.Address = address
	p.ipTracker[ipOf(address)]++
}

// SetConnectionState sets the connection state of the given remote peer.
func (p *Status) SetConnectionState(pid PeerID, state PeerConnectionState) {
	p.store.Lock()
	defer p.store.Unlock()
	p.store.PeerDataGetOrCreate(pid).ConnState = state
}

// IsBad states if the peer is to be considered bad (by *any* of the registered scorers).
func (p *Status) IsBad(pid PeerID) bool {
	p.store.RLock()
	defer p.store.RUnlock()
	return p.isfromBadIP(pid) || p.scorers.IsBadPeer(pid)
}

// multiaddrDelay stands for the cost of parsing the peer's multiaddr (test hook).
var multiaddrDelay = 50 * time.Millisecond

func (p *Status) isfromBadIP(pid PeerID) bool {
	d, ok := p.store.PeerData(pid)
	if !ok {
		return false
	}
	time.Sleep(multiaddrDelay)
	return p.ipTracker[ipOf(d.Address)] > p.ipLimit
}

func ipOf(addr string) string {
	parts := strings.Split(addr, "/")
	if len(parts) > 2 {
		return parts[2]
	}
	return addr
}

func main() {
	p := NewStatus()
	p.Add("16Uiu2HAm-a", "/ip4/10.0.0.1/tcp/13000")
	p.Add("16Uiu2HAm-b", "/ip4/10.0.0.2/tcp/13000")

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // sync service filtering peers before a blocks-by-range request
		defer wg.Done()
		fmt.Println("a bad:", p.IsBad("16Uiu2HAm-a"))
	}()
	go func() { // libp2p connection handler
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		p.SetConnectionState("16Uiu2HAm-b", PeerConnected)
	}()
	wg.Wait()
	fmt.Println("done")
}
