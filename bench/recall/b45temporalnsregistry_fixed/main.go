// Fixed version (PR #2076 applied).
// Project: temporalio/temporal, server v1.13 development (October 2021).
// Files/functions: common/namespace/registry.go (registry.GetNamespaceID,
// GetNamespace, getNamespace, getNamespaceByID, refreshLoop,
// refreshNamespaces, publishCacheUpdate).
// Issue/PR: temporalio/temporal PR #2076 "Avoid acquiring shared lock
// recursively".
//
// The namespace registry had just replaced its atomic.Value caches with two
// plain caches guarded by cacheLock, a sync.RWMutex. getNamespace, behind
// GetNamespace and GetNamespaceID (used by the frontend on every request),
// read-locks cacheLock to map the name to an ID and then calls
// getNamespaceByID, which read-locks cacheLock again. The refresh loop swaps
// in new caches through publishCacheUpdate, whose updateCache closure
// write-locks cacheLock (under callbackLock). If that Lock lands between the
// two RLocks, the writer waits for the reader and the reader's second RLock
// waits behind the writer: the request goroutine and the refresher hang, and
// so does every later namespace lookup. The fix makes getNamespace call
// getNamespaceByIDLocked, which takes no lock.
package main

import (
	"fmt"
	"sync"
	"time"
)

type Namespace struct {
	id, name            string
	notificationVersion int64
}

func (ns *Namespace) ID() string   { return ns.id }
func (ns *Namespace) Name() string { return ns.name }

// Cache is the common/cache LRU interface (it has its own internal lock).
type Cache interface {
	Get(key any) any
	Put(key, value any) any
}

type lru struct {
	mu sync.Mutex
	m  map[any]any
}

func newCache() Cache { return &lru{m: map[any]any{}} }

func (c *lru) Get(key any) any { c.mu.Lock(); defer c.mu.Unlock(); return c.m[key] }
func (c *lru) Put(key, value any) any {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m[key]
	c.m[key] = value
	return old
}

type Persistence interface {
	ListNamespaces() ([]*Namespace, error)
}

type CallbackFn func(oldNamespaces, newNamespaces []*Namespace)

type registry struct {
	triggerRefreshCh chan chan struct{}
	persistence      Persistence

	// cacheLock protects cachNameToID and cacheByID.
	cacheLock     sync.RWMutex
	cacheNameToID Cache
	cacheByID     Cache

	callbackLock sync.Mutex
	callbacks    map[int32]CallbackFn
}

// GetNamespaceID retrieves namespaceID by using GetNamespace
func (r *registry) GetNamespaceID(name string) (string, error) {
	ns, err := r.GetNamespace(name)
	if err != nil {
		return "", err
	}
	return ns.ID(), nil
}

func (r *registry) GetNamespace(name string) (*Namespace, error) {
	if name == "" {
		return nil, fmt.Errorf("namespace is empty")
	}
	return r.getNamespace(name)
}

// getNamespace retrieves the information from the cache if it exists
func (r *registry) getNamespace(name string) (*Namespace, error) {
	r.cacheLock.RLock()
	defer r.cacheLock.RUnlock()
	if id, ok := r.cacheNameToID.Get(name).(string); ok {
		time.Sleep(50 * time.Millisecond) // the refresh loop publishes here
		return r.getNamespaceByIDLocked(id)
	}
	return nil, fmt.Errorf("namespace name %q not found", name)
}

// getNamespaceByID retrieves the information from the cache if it exists.
func (r *registry) getNamespaceByID(id string) (*Namespace, error) {
	r.cacheLock.RLock()
	defer r.cacheLock.RUnlock()
	return r.getNamespaceByIDLocked(id)
}

func (r *registry) getNamespaceByIDLocked(id string) (*Namespace, error) {
	if ns, ok := r.cacheByID.Get(id).(*Namespace); ok {
		return ns, nil
	}
	return nil, fmt.Errorf("namespace id %q not found", id)
}

func (r *registry) Refresh() {
	replyCh := make(chan struct{})
	r.triggerRefreshCh <- replyCh
	<-replyCh
}

func (r *registry) refreshLoop() {
	for replyCh := range r.triggerRefreshCh {
		if err := r.refreshNamespaces(); err != nil {
			fmt.Println("Error refreshing namespace cache", err)
		}
		if replyCh != nil {
			replyCh <- struct{}{}
		}
	}
}

func (r *registry) refreshNamespaces() error {
	namespaces, err := r.persistence.ListNamespaces()
	if err != nil {
		return err
	}
	newCacheNameToID, newCacheByID := newCache(), newCache()
	var oldEntries, newEntries []*Namespace
	for _, ns := range namespaces {
		if old, ok := newCacheByID.Put(ns.ID(), ns).(*Namespace); ok {
			oldEntries, newEntries = append(oldEntries, old), append(newEntries, ns)
		}
		newCacheNameToID.Put(ns.Name(), ns.ID())
	}
	r.publishCacheUpdate(func() ([]*Namespace, []*Namespace) {
		r.cacheLock.Lock()
		defer r.cacheLock.Unlock()
		r.cacheByID = newCacheByID
		r.cacheNameToID = newCacheNameToID
		return oldEntries, newEntries
	})
	return nil
}

func (r *registry) publishCacheUpdate(updateCache func() ([]*Namespace, []*Namespace)) {
	r.callbackLock.Lock()
	defer r.callbackLock.Unlock()
	oldEntries, newEntries := updateCache()
	for _, callback := range r.callbacks {
		callback(oldEntries, newEntries)
	}
}

type fakePersistence struct{}

func (fakePersistence) ListNamespaces() ([]*Namespace, error) {
	return []*Namespace{{id: "7c3e-ns", name: "payments", notificationVersion: 3}}, nil
}

func main() {
	r := &registry{triggerRefreshCh: make(chan chan struct{}, 1), persistence: fakePersistence{},
		cacheNameToID: newCache(), cacheByID: newCache(), callbacks: map[int32]CallbackFn{}}
	_ = r.refreshNamespaces() // Start: initial scan
	go r.refreshLoop()

	done := make(chan struct{})
	go func() { // frontend handler resolving the request's namespace
		id, err := r.GetNamespaceID("payments")
		fmt.Println("namespace id:", id, err)
		close(done)
	}()
	time.Sleep(20 * time.Millisecond)
	r.Refresh() // the 10s refresh tick
	<-done
}
