// Project: cockroachdb (pkg/gossip, infostore.go)
// Bug: infoStore.runCallbacks invokes registered callbacks synchronously from
// addInfo, i.e. while Gossip.AddInfo holds g.mu; the StorePool callback reads
// the node descriptor through Gossip.GetInfo, which takes g.mu.RLock.
// Fix: queue callback work and run it on a dedicated callback worker goroutine.
package main

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
)

type NodeID int
type StoreID int

type Callback func(key string, content []byte)

type callback struct {
	matcher *regexp.Regexp
	method  Callback
}

type info struct {
	Value     []byte
	OrigStamp int64
	TTLStamp  int64
	NodeID    NodeID
}

type Stopper struct {
	quiescer chan struct{}
	wg       sync.WaitGroup
}

func NewStopper() *Stopper { return &Stopper{quiescer: make(chan struct{})} }
func (s *Stopper) RunWorker(f func()) {
	s.wg.Add(1)
	go func() { defer s.wg.Done(); f() }()
}
func (s *Stopper) ShouldQuiesce() <-chan struct{} { return s.quiescer }
func (s *Stopper) Stop()                          { close(s.quiescer); s.wg.Wait() }

type infoStore struct {
	nodeID         NodeID
	Infos          map[string]*info
	callbacks      []*callback
	callbackWorkMu sync.Mutex
	callbackWork   []func()
	callbackCh     chan struct{}
}

func newInfoStore(nodeID NodeID, stopper *Stopper) *infoStore {
	is := &infoStore{nodeID: nodeID, Infos: make(map[string]*info), callbackCh: make(chan struct{}, 1)}
	is.launchCallbackWorker(stopper)
	return is
}

func (is *infoStore) newInfo(val []byte, ttl time.Duration) *info {
	now := time.Now().UnixNano()
	return &info{Value: val, OrigStamp: now, TTLStamp: now + int64(ttl), NodeID: is.nodeID}
}

func (is *infoStore) getInfo(key string) *info {
	if i, ok := is.Infos[key]; ok && i.TTLStamp > time.Now().UnixNano() {
		return i
	}
	return nil
}

func (is *infoStore) addInfo(key string, i *info) error {
	if existing, ok := is.Infos[key]; ok && existing.OrigStamp > i.OrigStamp {
		return errors.New("info not fresh")
	}
	is.Infos[key] = i
	is.processCallbacks(key, i.Value)
	return nil
}

func (is *infoStore) registerCallback(pattern string, method Callback) {
	is.callbacks = append(is.callbacks, &callback{matcher: regexp.MustCompile(pattern), method: method})
}

func (is *infoStore) processCallbacks(key string, content []byte) {
	var matches []Callback
	for _, cb := range is.callbacks {
		if cb.matcher.MatchString(key) {
			matches = append(matches, cb.method)
		}
	}
	is.runCallbacks(key, content, matches...)
}

func (is *infoStore) runCallbacks(key string, content []byte, callbacks ...Callback) {
	f := func() {
		for _, method := range callbacks {
			method(key, content)
		}
	}
	is.callbackWorkMu.Lock()
	is.callbackWork = append(is.callbackWork, f)
	is.callbackWorkMu.Unlock()
	select {
	case is.callbackCh <- struct{}{}:
	default:
	}
}

func (is *infoStore) launchCallbackWorker(stopper *Stopper) {
	stopper.RunWorker(func() {
		for {
			for {
				is.callbackWorkMu.Lock()
				wq := is.callbackWork
				is.callbackWork = nil
				is.callbackWorkMu.Unlock()
				if len(wq) == 0 {
					break
				}
				for _, w := range wq {
					w()
				}
			}
			select {
			case <-is.callbackCh:
			case <-stopper.ShouldQuiesce():
				return
			}
		}
	})
}

type server struct {
	mu struct {
		sync.RWMutex
		is *infoStore
	}
}

type Gossip struct {
	*server
	NodeID NodeID
}

func New(nodeID NodeID, stopper *Stopper) *Gossip {
	g := &Gossip{server: &server{}, NodeID: nodeID}
	g.mu.is = newInfoStore(nodeID, stopper)
	return g
}

func (g *Gossip) AddInfo(key string, val []byte, ttl time.Duration) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.mu.is.addInfo(key, g.mu.is.newInfo(val, ttl))
}

func (g *Gossip) GetInfo(key string) ([]byte, error) {
	g.mu.RLock()
	i := g.mu.is.getInfo(key)
	g.mu.RUnlock()
	if i == nil {
		return nil, fmt.Errorf("key %q does not exist or has expired", key)
	}
	return i.Value, nil
}

func (g *Gossip) RegisterCallback(pattern string, method Callback) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.mu.is.registerCallback(pattern, method)
}

type StorePool struct {
	gossip   *Gossip
	mu       sync.Mutex
	detailsM map[StoreID]string
	updated  sync.WaitGroup
}

func (sp *StorePool) storeGossipUpdate(key string, content []byte) {
	defer sp.updated.Done()
	var storeID StoreID
	var nodeID NodeID
	fmt.Sscanf(string(content), "store=%d node=%d", &storeID, &nodeID)
	locality := "unknown"
	if nodeDesc, err := sp.gossip.GetInfo(fmt.Sprintf("node:%d", nodeID)); err == nil {
		locality = strings.TrimPrefix(string(nodeDesc), "locality=")
	}
	sp.mu.Lock()
	sp.detailsM[storeID] = locality
	sp.mu.Unlock()
}

func main() {
	stopper := NewStopper()
	g := New(1, stopper)
	sp := &StorePool{gossip: g, detailsM: make(map[StoreID]string)}
	g.RegisterCallback("^store:", sp.storeGossipUpdate)

	if err := g.AddInfo("node:1", []byte("locality=region=us-east1,zone=b"), time.Hour); err != nil {
		panic(err)
	}
	sp.updated.Add(1)
	if err := g.AddInfo("store:1", []byte("store=1 node=1"), time.Hour); err != nil {
		panic(err)
	}
	sp.updated.Wait()
	stopper.Stop()
	sp.mu.Lock()
	fmt.Println("store 1 locality:", sp.detailsM[1])
	sp.mu.Unlock()
}
