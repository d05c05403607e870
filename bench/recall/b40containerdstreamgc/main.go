// Project: containerd/containerd, services/streaming/manager.go (the "streaming" plugin
// used by the transfer service) together with metadata/gc.go (metadata.DB's collection of
// registered CollectibleResources), containerd 1.7.0 beta/rc tags.
// Fixed by PR containerd/containerd#8188 "Fix streaming manager deadlock on collection":
// "The call to ms.Close() causes the deadlock since it attempts to acquire a lock the
// collection already has, it should only be calling Close on the stream."
//
// metadata.DB's garbage collector asks every registered CollectibleResource for a
// CollectionContext; the stream manager's StartCollection write-locks sm.rwlock (line 127)
// and keeps it until Cancel or Finish. Finish removes the unreferenced streams and closed
// each one through managedStream.Close, which write-locks the same rwlock through its
// back-pointer to the manager (line 146) to unregister itself. The collector goroutine
// blocks on a lock it holds, and every later Register or Get on the manager blocks too.
// main registers a stream under a lease, deletes the lease and runs the collector.
package main

import (
	"errors"
	"fmt"
	"sync"
)

// ---- pkg/streaming ----

type Stream interface {
	Send(any) error
	Recv() (any, error)
	Close() error
}

// ---- gc and metadata ----

type Node struct {
	Type      string
	Namespace string
	Key       string
}

const ResourceStream = "stream"

type CollectionContext interface {
	All(func(Node))
	Active(namespace string, fn func(Node))
	Leased(namespace, lease string, fn func(Node))
	Remove(Node)
	Cancel() error
	Finish() error
}

type CollectibleResource interface {
	StartCollection() (CollectionContext, error)
	ReferenceLabel() string
}

type DB struct {
	leases     map[string]map[string]bool // namespace -> lease -> exists
	collectors map[string]CollectibleResource
}

func (m *DB) RegisterCollectibleResource(t string, c CollectibleResource) {
	m.collectors[t] = c
}

// GarbageCollect marks everything reachable from the roots and sweeps the rest.
func (m *DB) GarbageCollect() error {
	for _, rc := range m.collectors {
		cc, err := rc.StartCollection()
		if err != nil {
			return err
		}
		reachable := map[Node]bool{}
		for ns, leases := range m.leases {
			cc.Active(ns, func(n Node) { reachable[n] = true })
			for lease := range leases {
				cc.Leased(ns, lease, func(n Node) { reachable[n] = true })
			}
		}
		cc.All(func(n Node) {
			if !reachable[n] {
				cc.Remove(n)
			}
		})
		if err := cc.Finish(); err != nil {
			return err
		}
	}
	return nil
}

// ---- services/streaming/manager.go ----

type streamManager struct {
	// streams maps namespace -> name -> stream
	streams map[string]map[string]*managedStream
	byLease map[string]map[string]map[string]struct{}
	rwlock  sync.RWMutex
}

func (sm *streamManager) Register(ns, lease, name string, stream Stream) error {
	ms := &managedStream{Stream: stream, ns: ns, name: name, lease: lease, manager: sm}

	sm.rwlock.Lock()
	defer sm.rwlock.Unlock()
	nsMap, ok := sm.streams[ns]
	if !ok {
		nsMap = make(map[string]*managedStream)
		sm.streams[ns] = nsMap
	}
	if _, ok := nsMap[name]; ok {
		return errors.New("already exists")
	}
	nsMap[name] = ms
	if lease != "" {
		if sm.byLease[ns] == nil {
			sm.byLease[ns] = map[string]map[string]struct{}{}
		}
		if sm.byLease[ns][lease] == nil {
			sm.byLease[ns][lease] = map[string]struct{}{}
		}
		sm.byLease[ns][lease][name] = struct{}{}
	}
	return nil
}

func (sm *streamManager) StartCollection() (CollectionContext, error) {
	// lock now and collection will unlock on cancel or finish
	sm.rwlock.Lock()

	return &collectionContext{manager: sm}, nil
}

func (sm *streamManager) ReferenceLabel() string {
	return "stream"
}

type managedStream struct {
	Stream

	ns      string
	name    string
	lease   string
	manager *streamManager
}

func (m *managedStream) Close() error {
	m.manager.rwlock.Lock()
	if nsMap, ok := m.manager.streams[m.ns]; ok {
		delete(nsMap, m.name)
	}
	if m.lease != "" {
		if nsMap, ok := m.manager.byLease[m.ns]; ok {
			delete(nsMap[m.lease], m.name)
		}
	}
	m.manager.rwlock.Unlock()
	return m.Stream.Close()
}

type collectionContext struct {
	manager *streamManager
	removed []Node
}

func (cc *collectionContext) All(fn func(Node)) {
	for ns, nsMap := range cc.manager.streams {
		for name := range nsMap {
			fn(Node{Type: ResourceStream, Namespace: ns, Key: name})
		}
	}
}

func (cc *collectionContext) Active(ns string, fn func(Node)) {
	for name, stream := range cc.manager.streams[ns] {
		// Don't consider leased streams as active, the lease
		// will determine the status
		if stream.lease == "" {
			fn(Node{Type: ResourceStream, Namespace: ns, Key: name})
		}
	}
}

func (cc *collectionContext) Leased(ns, lease string, fn func(Node)) {
	for name := range cc.manager.byLease[ns][lease] {
		fn(Node{Type: ResourceStream, Namespace: ns, Key: name})
	}
}

func (cc *collectionContext) Remove(n Node) {
	cc.removed = append(cc.removed, n)
}

func (cc *collectionContext) Cancel() error {
	cc.manager.rwlock.Unlock()
	return nil
}

func (cc *collectionContext) Finish() error {
	var errs []error
	for _, node := range cc.removed {
		if nsMap, ok := cc.manager.streams[node.Namespace]; ok {
			if ms, ok := nsMap[node.Key]; ok {
				if err := ms.Close(); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	cc.manager.rwlock.Unlock()

	return errors.Join(errs...)
}

// ---- harness ----

type pipeStream struct{ name string }

func (p *pipeStream) Send(any) error     { return nil }
func (p *pipeStream) Recv() (any, error) { return nil, errors.New("closed") }
func (p *pipeStream) Close() error       { fmt.Println("closed stream", p.name); return nil }

func main() {
	db := &DB{leases: map[string]map[string]bool{}, collectors: map[string]CollectibleResource{}}
	sm := &streamManager{
		streams: map[string]map[string]*managedStream{},
		byLease: map[string]map[string]map[string]struct{}{},
	}
	db.RegisterCollectibleResource(ResourceStream, sm)

	// A transfer registered its progress stream under a lease, then the lease expired.
	sm.Register("default", "transfer-lease", "progress-1", &pipeStream{name: "progress-1"})

	fmt.Println("gc:", db.GarbageCollect())
	fmt.Println("register after gc:", sm.Register("default", "", "progress-2", &pipeStream{name: "progress-2"}))
}
