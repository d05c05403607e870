// Fixed twin (PR #11815 applied).
// Project: hashicorp/vault 1.8.0 (irrevocable-lease API), June 2021. Files:
// vault/request_handling.go (Core.HandleRequest), vault/router.go (Route,
// MatchingMountEntry), vault/logical_system.go (handleLeaseCount),
// vault/expiration.go (getIrrevocableLeaseCounts, getLeaseMountAccessor).
// PR: hashicorp/vault#11815 "fix irrevocable leases API deadlock on
// m.coreStateLock" (backport #11817 to release/1.8.x).
//
// The ExpirationManager keeps a pointer to the core's state lock
// (coreStateLock = &c.stateLock) because its revocation jobs run outside any
// request, so getLeaseMountAccessor read-locked m.coreStateLock itself. The
// new sys/leases/count endpoint reaches it from inside a request:
// Core.HandleRequest read-locks c.stateLock, the router dispatches to the
// system backend's path callback handleLeaseCount, getIrrevocableLeaseCounts
// ranges over the irrevocable sync.Map and calls getLeaseMountAccessor per
// lease: a second read lock in the same goroutine. A seal or step-down asking
// for the write lock in between queues the nested RLock behind it while it
// waits for the first one: Vault hangs. The fix splits the helper:
// getLeaseMountAccessor expects the caller to hold the lock (API path), and
// getLeaseMountAccessorLocked takes it (revocation jobs).
package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

type Request struct {
	Operation, Path string
	Data            map[string]interface{}
}

type Response struct{ Data map[string]interface{} }

type FieldData struct{ Raw map[string]interface{} } // GetOk looks a field up

type OperationFunc func(ctx context.Context, req *Request, d *FieldData) (*Response, error)

// Backend is logical.Backend as seen by the router.
type Backend interface {
	HandleRequest(ctx context.Context, req *Request) (*Response, error)
}

type MountEntry struct{ Path, Accessor string }

type routeEntry struct {
	mountEntry *MountEntry
	backend    Backend
}

type Router struct {
	l    sync.RWMutex
	root map[string]*routeEntry
}

func (r *Router) matchingRoute(path string) *routeEntry {
	r.l.RLock()
	defer r.l.RUnlock()
	for prefix, re := range r.root { // longest-prefix match in the real radix tree
		if strings.HasPrefix(path, prefix) {
			return re
		}
	}
	return nil
}

func (r *Router) MatchingMountEntry(ctx context.Context, path string) *MountEntry {
	if re := r.matchingRoute(path); re != nil {
		return re.mountEntry
	}
	return nil
}

func (r *Router) Route(ctx context.Context, req *Request) (*Response, error) {
	re := r.matchingRoute(req.Path)
	if re == nil {
		return nil, fmt.Errorf("no handler for route %q", req.Path)
	}
	return re.backend.HandleRequest(ctx, &Request{Operation: req.Operation, Path: strings.TrimPrefix(req.Path, re.mountEntry.Path), Data: req.Data})
}

type SystemBackend struct {
	Core  *Core
	paths map[string]map[string]OperationFunc
}

// HandleRequest is framework.Backend.HandleRequest: find the path, run the callback.
func (b *SystemBackend) HandleRequest(ctx context.Context, req *Request) (*Response, error) {
	cb, ok := b.paths[req.Path][req.Operation]
	if !ok {
		return nil, fmt.Errorf("unsupported operation %s on %q", req.Operation, req.Path)
	}
	time.Sleep(50 * time.Millisecond) // field parsing and bookkeeping; a seal queues meanwhile
	return cb(ctx, req, &FieldData{Raw: req.Data})
}

func (b *SystemBackend) handleLeaseCount(ctx context.Context, req *Request, d *FieldData) (*Response, error) {
	if typeRaw, ok := d.Raw["type"]; !ok || strings.ToLower(typeRaw.(string)) != "irrevocable" {
		return nil, nil
	}
	includeChildNamespaces, _ := d.Raw["include_child_namespaces"].(bool)
	resp, err := b.Core.expiration.getIrrevocableLeaseCounts(ctx, includeChildNamespaces)
	if err != nil {
		return nil, err
	}
	return &Response{Data: resp}, nil
}

type ExpirationManager struct {
	core          *Core
	coreStateLock *sync.RWMutex
	irrevocable   sync.Map
}

// getLeaseMountAccessorLocked takes the state lock, for the revocation jobs;
// getLeaseMountAccessor must be called with m.coreStateLock held for read.
func (m *ExpirationManager) getLeaseMountAccessorLocked(ctx context.Context, leaseID string) string {
	m.coreStateLock.RLock()
	defer m.coreStateLock.RUnlock()
	return m.getLeaseMountAccessor(ctx, leaseID)
}

func (m *ExpirationManager) getLeaseMountAccessor(ctx context.Context, leaseID string) string {
	mount := m.core.router.MatchingMountEntry(ctx, leaseID)
	if mount == nil {
		return "mount-accessor-not-found"
	}
	return mount.Accessor
}

func (m *ExpirationManager) getIrrevocableLeaseCounts(ctx context.Context, includeChildNamespaces bool) (map[string]interface{}, error) {
	numMatchingLeasesPerMount := make(map[string]int)
	numMatchingLeases := 0
	m.irrevocable.Range(func(k, v interface{}) bool {
		leaseID := k.(string) // (namespace filtering elided)
		numMatchingLeasesPerMount[m.getLeaseMountAccessor(ctx, leaseID)]++
		numMatchingLeases++
		return true
	})
	return map[string]interface{}{"lease_count": numMatchingLeases, "counts": numMatchingLeasesPerMount}, nil
}

type Core struct {
	stateLock  sync.RWMutex
	sealed     bool
	router     *Router
	expiration *ExpirationManager
}

func NewCore() *Core {
	c := &Core{router: &Router{root: map[string]*routeEntry{}}}
	sys := &SystemBackend{Core: c}
	sys.paths = map[string]map[string]OperationFunc{"leases/count": {"read": sys.handleLeaseCount}}
	c.router.root["sys/"] = &routeEntry{mountEntry: &MountEntry{Path: "sys/", Accessor: "system_7c9e2a1b"}, backend: sys}
	c.router.root["database/"] = &routeEntry{mountEntry: &MountEntry{Path: "database/", Accessor: "database_41f0d3aa"}}
	c.expiration = &ExpirationManager{core: c, coreStateLock: &c.stateLock}
	return c
}

// HandleRequest is the entry point of every API request (vault/request_handling.go).
func (c *Core) HandleRequest(ctx context.Context, req *Request) (*Response, error) {
	c.stateLock.RLock()
	defer c.stateLock.RUnlock()
	if c.sealed {
		return nil, errors.New("Vault is sealed")
	}
	return c.handleCancelableRequest(ctx, req)
}

func (c *Core) handleCancelableRequest(ctx context.Context, req *Request) (*Response, error) {
	return c.router.Route(ctx, req) // after token checks, quotas, audit
}

func (c *Core) Seal() {
	c.stateLock.Lock()
	defer c.stateLock.Unlock()
	c.sealed = true
}

func main() {
	c := NewCore()
	c.expiration.irrevocable.Store("database/creds/readonly/h6Yb2Qx1", struct{}{}) // revocation gave up

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // GET sys/leases/count?type=irrevocable
		defer wg.Done()
		resp, err := c.HandleRequest(context.Background(), &Request{Operation: "read", Path: "sys/leases/count",
			Data: map[string]interface{}{"type": "irrevocable"}})
		fmt.Println("lease count:", resp.Data["lease_count"], err)
	}()
	time.Sleep(10 * time.Millisecond)
	go func() { defer wg.Done(); c.Seal() }() // `vault operator seal`, or a step-down
	wg.Wait()
	fmt.Println("sealed:", c.sealed)
}
