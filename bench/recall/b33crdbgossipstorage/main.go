// Project: cockroachdb/cockroach (gossip/gossip.go, storage/stores.go, storage/store.go, server/node.go; mid-2016)
// Issue: #7972 "Potential deadlock between Gossip.SetStorage and
// Node.gossipStores (inconsistent lock order)", found with go-deadlock.
//
// Bug: Gossip.SetStorage takes the gossip mutex g.mu (line 91) and, still
// holding it, calls storage.ReadBootstrapInfo through the gossip.Storage
// interface; the implementation, *storage.Stores, read-locks ls.mu (line
// 252). The gossip worker goes the other way: Node.gossipStores calls
// Stores.VisitStores, which read-locks ls.mu (line 237) and runs the
// visitor, Store.GossipStore -> Gossip.AddInfoProto -> AddInfo, which takes
// g.mu (line 128). Both sides only read-lock ls.mu, so the inversion bites as
// soon as a writer queues on ls.mu in between (a store being added,
// Stores.AddStore at line 218): the writer waits for the visitor's read
// lock, SetStorage's RLock waits behind the writer while holding g.mu, and the
// visitor waits for g.mu.
//
// Fix: SetStorage reads the bootstrap info before taking g.mu ("Maintain lock
// ordering"), so g.mu is never held while ls.mu is acquired.
//
// main() drives the three goroutines with a store testing knob that pauses
// GossipStore inside the visitor until the writer and SetStorage are queued.
package main

import (
	"encoding/json"
	"fmt"
	"log"
	"sync"
	"time"
)

type NodeID int32
type StoreID int32

// ---- gossip ----

type UnresolvedAddr struct {
	NetworkField string
	AddressField string
}

// BootstrapInfo contains information necessary to bootstrap the gossip network.
type BootstrapInfo struct {
	Addresses []UnresolvedAddr
	Timestamp int64
}

// Storage is an interface which allows the gossip instance
// to read and write bootstrapping data to persistent storage
// between instantiations.
type Storage interface {
	// ReadBootstrapInfo fetches the bootstrap data from the persistent
	// store into the provided bootstrap protobuf. Returns nil or an
	// error on failure.
	ReadBootstrapInfo(*BootstrapInfo) error
	// WriteBootstrapInfo stores the provided bootstrap data to the
	// persistent store. Returns nil or an error on failure.
	WriteBootstrapInfo(*BootstrapInfo) error
}

type infoStore struct {
	NodeAddr UnresolvedAddr
	Infos    map[string][]byte
}

type server struct {
	mu sync.Mutex // Protects the fields below
	is *infoStore // The backing infostore
}

// Gossip is an instance of a gossip node. It embeds a gossip server.
type Gossip struct {
	*server                      // Embedded gossip RPC server
	storage        Storage       // Persistent storage interface
	bootstrapInfo  BootstrapInfo // BootstrapInfo proto for persistent storage
	bootstrapAddrs map[UnresolvedAddr]struct{}
}

func New() *Gossip {
	return &Gossip{
		server:         &server{is: &infoStore{Infos: map[string][]byte{}}},
		bootstrapAddrs: map[UnresolvedAddr]struct{}{},
	}
}

// SetStorage provides an instance of the Storage interface
// for reading and writing gossip bootstrap data from persistent
// storage. This should be invoked as early in the lifecycle of a
// gossip instance as possible, but can be called at any time.
func (g *Gossip) SetStorage(storage Storage) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.storage = storage

	// Read the bootstrap info from the persistent store.
	var storedBI BootstrapInfo
	err := storage.ReadBootstrapInfo(&storedBI)
	if err != nil {
		log.Printf("failed to read gossip bootstrap info: %s", err)
	}

	// Merge the stored bootstrap info addresses with any we've become
	// aware of through gossip.
	for _, addr := range storedBI.Addresses {
		// If the address is new, and isn't our own address, add it.
		if addr != g.is.NodeAddr {
			g.maybeAddBootstrapAddress(addr)
		}
	}
	return nil
}

// maybeAddBootstrapAddress adds the specified address to the list of
// bootstrap addresses if not already present. The caller must hold the
// gossip mutex.
func (g *Gossip) maybeAddBootstrapAddress(addr UnresolvedAddr) bool {
	if _, ok := g.bootstrapAddrs[addr]; !ok {
		g.bootstrapInfo.Addresses = append(g.bootstrapInfo.Addresses, addr)
		g.bootstrapAddrs[addr] = struct{}{}
		return true
	}
	return false
}

// AddInfo adds or updates an info object. Returns an error if info
// couldn't be added.
func (g *Gossip) AddInfo(key string, val []byte, ttl time.Duration) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.is.Infos[key] = val
	return nil
}

// AddInfoProto adds or updates an info object. Returns an error if info
// couldn't be added.
func (g *Gossip) AddInfoProto(key string, msg interface{}, ttl time.Duration) error {
	bytes, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	return g.AddInfo(key, bytes, ttl)
}

// MakeStoreKey returns the gossip key for the given store.
func MakeStoreKey(storeID StoreID) string { return fmt.Sprintf("store:%d", storeID) }

// ---- storage ----

const ttlStoreGossip = 2 * time.Minute

type StoreIdent struct {
	NodeID  NodeID
	StoreID StoreID
}

type StoreDescriptor struct {
	StoreID  StoreID
	Capacity int64
}

// StoreTestingKnobs is a part of the context used to control parts of the
// system.
type StoreTestingKnobs struct {
	// BeforeGossipStore is called at the start of Store.GossipStore.
	BeforeGossipStore func()
}

type StoreContext struct {
	Gossip       *Gossip
	TestingKnobs StoreTestingKnobs
}

// A Store maintains a map of ranges by start key.
type Store struct {
	Ident StoreIdent
	ctx   StoreContext
	bi    *BootstrapInfo // persisted gossip bootstrap info (an engine key)
}

// Descriptor returns a StoreDescriptor including current store
// capacity information.
func (s *Store) Descriptor() (*StoreDescriptor, error) {
	return &StoreDescriptor{StoreID: s.Ident.StoreID, Capacity: 1 << 30}, nil
}

// GossipStore broadcasts the store on the gossip network.
func (s *Store) GossipStore() error {
	if fn := s.ctx.TestingKnobs.BeforeGossipStore; fn != nil {
		fn()
	}
	storeDesc, err := s.Descriptor()
	if err != nil {
		return fmt.Errorf("problem getting store descriptor for store %+v: %v", s.Ident, err)
	}
	// Unique gossip key per store.
	gossipStoreKey := MakeStoreKey(storeDesc.StoreID)
	// Gossip store descriptor.
	return s.ctx.Gossip.AddInfoProto(gossipStoreKey, storeDesc, ttlStoreGossip)
}

// A Stores provides methods to access a collection of stores. Stores also
// implements the gossip.Storage interface.
type Stores struct {
	mu         sync.RWMutex       // Protects storeMap and addrs
	storeMap   map[StoreID]*Store // Map from StoreID to Store
	biLatestTS int64              // Timestamp of gossip bootstrap info
	latestBI   *BootstrapInfo     // Latest cached bootstrap info
}

var _ Storage = &Stores{} // Stores implements the gossip.Storage interface

func NewStores() *Stores {
	return &Stores{storeMap: map[StoreID]*Store{}}
}

// AddStore adds the specified store to the store map.
func (ls *Stores) AddStore(s *Store) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if _, ok := ls.storeMap[s.Ident.StoreID]; ok {
		panic(fmt.Sprintf("cannot add store twice: %+v", s.Ident))
	}
	ls.storeMap[s.Ident.StoreID] = s
	// If we've already read the gossip bootstrap info, ensure that
	// all stores have the most recent values.
	if ls.biLatestTS != 0 {
		if err := ls.updateBootstrapInfo(ls.latestBI); err != nil {
			log.Printf("failed to update bootstrap info on newly added store: %s", err)
		}
	}
}

// VisitStores implements a visitor pattern over stores in the storeMap.
// The specified function is invoked with each store in turn. Stores are
// visited in a random order.
func (ls *Stores) VisitStores(visitor func(s *Store) error) error {
	ls.mu.RLock()
	defer ls.mu.RUnlock()
	for _, s := range ls.storeMap {
		if err := visitor(s); err != nil {
			return err
		}
	}
	return nil
}

// ReadBootstrapInfo implements the gossip.Storage interface. Read
// attempts to read gossip bootstrap info from every known store and
// finds the most recent from all stores to initialize the bootstrap
// info argument.
func (ls *Stores) ReadBootstrapInfo(bi *BootstrapInfo) error {
	ls.mu.RLock()
	defer ls.mu.RUnlock()
	var latestTS int64

	// Find the most recent bootstrap info.
	for _, s := range ls.storeMap {
		if s.bi != nil && latestTS < s.bi.Timestamp {
			latestTS = s.bi.Timestamp
			*bi = *s.bi
		}
	}
	log.Printf("read %d node addresses from persistent storage", len(bi.Addresses))
	return ls.updateBootstrapInfo(bi)
}

// WriteBootstrapInfo implements the gossip.Storage interface. Write
// persists the supplied bootstrap info to every known store.
func (ls *Stores) WriteBootstrapInfo(bi *BootstrapInfo) error {
	ls.mu.RLock()
	defer ls.mu.RUnlock()
	bi.Timestamp = time.Now().UnixNano()
	return ls.updateBootstrapInfo(bi)
}

func (ls *Stores) updateBootstrapInfo(bi *BootstrapInfo) error {
	if bi.Timestamp < ls.biLatestTS {
		return nil
	}
	// Update the latest timestamp and set cached version.
	ls.biLatestTS = bi.Timestamp
	cp := *bi
	ls.latestBI = &cp
	// Update all stores.
	for _, s := range ls.storeMap {
		c := *bi
		s.bi = &c
	}
	return nil
}

// ---- server ----

// A Node manages a map of stores (by store ID) for which it serves
// traffic.
type Node struct {
	gossip *Gossip
	stores *Stores
}

func (n *Node) addStore(store *Store) {
	n.stores.AddStore(store)
}

// initGossipStorage is the tail of Node.initStores: it hands the stores to
// gossip as its persistent bootstrap storage.
func (n *Node) initGossipStorage() error {
	return n.gossip.SetStorage(n.stores)
}

// gossipStores broadcasts each store to the gossip network.
func (n *Node) gossipStores() {
	if err := n.stores.VisitStores(func(s *Store) error {
		return s.GossipStore()
	}); err != nil {
		log.Print(err)
	}
}

func main() {
	g := New()
	inGossipStore := make(chan struct{})
	othersQueued := make(chan struct{})
	var once sync.Once
	knobs := StoreTestingKnobs{BeforeGossipStore: func() {
		once.Do(func() {
			close(inGossipStore)
			<-othersQueued
		})
	}}
	n := &Node{gossip: g, stores: NewStores()}
	n.addStore(&Store{Ident: StoreIdent{NodeID: 1, StoreID: 1}, ctx: StoreContext{Gossip: g, TestingKnobs: knobs},
		bi: &BootstrapInfo{Addresses: []UnresolvedAddr{{"tcp", "n2:26257"}}, Timestamp: 1}})

	var wg sync.WaitGroup
	wg.Add(3)
	// The node's gossip worker: periodic gossipStores.
	go func() {
		defer wg.Done()
		n.gossipStores()
	}()
	<-inGossipStore
	// bootstrapStores: a newly bootstrapped store is added to the node.
	go func() {
		defer wg.Done()
		n.addStore(&Store{Ident: StoreIdent{NodeID: 1, StoreID: 2}, ctx: StoreContext{Gossip: g, TestingKnobs: knobs}})
	}()
	time.Sleep(20 * time.Millisecond) // the writer queues on ls.mu.Lock
	// initStores: gossip gets the stores as its bootstrap storage.
	go func() {
		defer wg.Done()
		if err := n.initGossipStorage(); err != nil {
			log.Print(err)
		}
	}()
	time.Sleep(20 * time.Millisecond) // SetStorage holds g.mu and queues on ls.mu.RLock
	close(othersQueued)
	wg.Wait()
	fmt.Println("done")
}
