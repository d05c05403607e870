// Project: hashicorp/consul (agent/proxycfg-sources/catalog/config_source.go: ConfigSource.Watch, startSync, cleanup), v1.18.0, 2024 (fixed by PR #20867 "Fix xDS deadlock due to syncLoop termination").
// Bug: cleanup holds ConfigSource.mu while it asks the service's sync loop to stop, by sending a reply channel on the unbuffered closeCh and waiting for it to be closed. The sync loop returns for good when fetchAndRegister fails, so once the last xDS stream of that proxy goes away cleanup blocks forever with mu held, and every later Watch (every new xDS stream on the server) blocks on mu. The fix replaces the chan-chan handshake with stopSyncLoopCh and a syncLoopDoneCh that the loop closes when it exits for any reason.
package main

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"
)

type ServiceKind string

func (k ServiceKind) IsProxy() bool { return k == "connect-proxy" || k == "mesh-gateway" }

type NodeService struct {
	ID   string
	Kind ServiceKind
}

type ProxyID struct {
	ServiceID string
	NodeName  string
	Token     string
}

type ConfigSnapshot struct{ ProxyID ProxyID }

// ---- go-memdb WatchSet ----

type WatchSet map[<-chan struct{}]struct{}

func (w WatchSet) Add(ch <-chan struct{}) { w[ch] = struct{}{} }

// WatchCh returns a channel that is sent to when any watched channel fires or
// ctx is done.
func (w WatchSet) WatchCh(ctx context.Context) <-chan error {
	out := make(chan error, 1)
	cases := []reflect.SelectCase{{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())}}
	for ch := range w {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)})
	}
	go func() {
		reflect.Select(cases)
		out <- ctx.Err()
	}()
	return out
}

// ---- state store ----

type Store struct {
	mu       sync.Mutex
	services map[string]*NodeService
	watch    map[string]chan struct{}
}

func (s *Store) NodeService(ws WatchSet, node, id string) (uint64, *NodeService, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watch[id] == nil {
		s.watch[id] = make(chan struct{})
	}
	ws.Add(s.watch[id])
	return 1, s.services[id], nil
}

func (s *Store) EnsureService(ns *NodeService) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.services[ns.ID] = ns
	if ch := s.watch[ns.ID]; ch != nil {
		close(ch)
		delete(s.watch, ns.ID)
	}
}

// ---- proxycfg.Manager ----

type Manager struct {
	mu         sync.Mutex
	registered map[ProxyID]*NodeService
}

func (m *Manager) Watch(id ProxyID) (<-chan *ConfigSnapshot, context.CancelFunc) {
	ch := make(chan *ConfigSnapshot, 1)
	ch <- &ConfigSnapshot{ProxyID: id}
	return ch, func() {}
}
func (m *Manager) Register(id ProxyID, ns *NodeService) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.registered[id] = ns
	return nil
}
func (m *Manager) Deregister(id ProxyID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.registered, id)
}

// ---- catalog.ConfigSource ----

type Config struct {
	NodeName string
	Manager  *Manager
	GetStore func() *Store
}

type ConfigSource struct {
	Config

	mu      sync.Mutex
	watches map[ProxyID]*watch

	shutdownCh chan struct{}
}

type watch struct {
	numWatchers int // guarded by ConfigSource.mu.
	closeCh     chan chan struct{}
}

func (m *ConfigSource) Watch(serviceID, nodeName, token string) (<-chan *ConfigSnapshot, context.CancelFunc, error) {
	proxyID := ProxyID{ServiceID: serviceID, NodeName: nodeName, Token: token}
	snapCh, cancelWatch := m.Manager.Watch(proxyID)

	m.mu.Lock()
	defer m.mu.Unlock()

	w, ok := m.watches[proxyID]
	if ok {
		w.numWatchers++
	} else {
		w = &watch{closeCh: make(chan chan struct{}), numWatchers: 1}
		m.watches[proxyID] = w
		if err := m.startSync(w.closeCh, proxyID); err != nil {
			delete(m.watches, proxyID)
			cancelWatch()
			return nil, nil, err
		}
	}

	var cancelOnce sync.Once
	cancel := func() {
		cancelOnce.Do(func() {
			cancelWatch()
			m.cleanup(proxyID)
		})
	}
	return snapCh, cancel, nil
}

func (m *ConfigSource) startSync(closeCh <-chan chan struct{}, proxyID ProxyID) error {
	fetchAndRegister := func() (WatchSet, error) {
		store := m.GetStore()
		ws := WatchSet{}
		_, ns, err := store.NodeService(ws, proxyID.NodeName, proxyID.ServiceID)
		switch {
		case err != nil:
			return nil, err
		case ns == nil:
			m.Manager.Deregister(proxyID)
			return ws, nil
		case !ns.Kind.IsProxy():
			return nil, errors.New("service must be a sidecar proxy or gateway")
		}
		if err := m.Manager.Register(proxyID, ns); err != nil {
			return nil, err
		}
		return ws, nil
	}

	syncLoop := func(ws WatchSet) {
		// Cancel the context on return to clean up the goroutine started by WatchCh.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()

		for {
			select {
			case <-ws.WatchCh(ctx):
				// Something changed, unblock and re-run the query.
			case doneCh := <-closeCh:
				// All watchers of this service (xDS streams) have gone away.
				m.Manager.Deregister(proxyID)
				close(doneCh)
				return
			case <-m.shutdownCh:
				return
			}

			var err error
			ws, err = fetchAndRegister()
			if err != nil {
				return
			}
		}
	}

	ws, err := fetchAndRegister()
	if err != nil {
		return err
	}
	go syncLoop(ws)
	return nil
}

// cleanup decrements the watchers counter for the given proxy, and if it has
// reached zero, stops the sync goroutine (and de-registers the service).
func (m *ConfigSource) cleanup(id ProxyID) {
	m.mu.Lock()
	defer m.mu.Unlock()

	h := m.watches[id]
	h.numWatchers--

	if h.numWatchers == 0 {
		// We wait for doneCh to be closed by the sync goroutine, so that the lock
		// is held until after the service is de-registered.
		doneCh := make(chan struct{})
		select {
		case h.closeCh <- doneCh:
			<-doneCh
		case <-m.shutdownCh:
		}
		delete(m.watches, id)
	}
}

func main() {
	store := &Store{services: map[string]*NodeService{}, watch: map[string]chan struct{}{}}
	store.EnsureService(&NodeService{ID: "web-sidecar-proxy", Kind: "connect-proxy"})
	store.EnsureService(&NodeService{ID: "api-sidecar-proxy", Kind: "connect-proxy"})
	src := &ConfigSource{
		Config:     Config{NodeName: "node-1", Manager: &Manager{registered: map[ProxyID]*NodeService{}}, GetStore: func() *Store { return store }},
		watches:    map[ProxyID]*watch{},
		shutdownCh: make(chan struct{}),
	}

	// Envoy for web opens its xDS stream (agentless, served by the server).
	_, cancelWeb, err := src.Watch("web-sidecar-proxy", "node-1", "")
	if err != nil {
		panic(err)
	}
	// The service is re-registered as a plain service: the sync loop's
	// re-fetch fails and the loop returns.
	store.EnsureService(&NodeService{ID: "web-sidecar-proxy", Kind: ""})
	time.Sleep(50 * time.Millisecond)

	// The web Envoy disconnects; its stream cleans up in the background.
	go cancelWeb()
	time.Sleep(20 * time.Millisecond)

	// A new Envoy (api) connects while that cleanup is in progress.
	_, cancelAPI, err := src.Watch("api-sidecar-proxy", "node-1", "")
	if err != nil {
		panic(err)
	}
	cancelAPI()
	fmt.Println("api xDS stream served")
}
