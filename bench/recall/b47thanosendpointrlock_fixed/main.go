// Project: thanos-io/thanos, v0.23.x (querier endpoint discovery, Oct 2021).
// Files: pkg/query/endpointset.go (EndpointSet.GetStoreClients,
// EndpointSet.Update, EndpointSet.updateEndpoint, endpointRef.HasStoreAPI,
// endpointRef.HasRulesAPI, endpointRef.HasClients, endpointRef.Update).
// Issue: thanos-io/thanos#4766 (queriers hang after upgrading to 0.23); fixed by
// PR #4795 "query: fix deadlock in endpointset" (backported to 0.23.2 in #4926).
//
// Every endpointRef guards its metadata and clients with an RWMutex. The
// HasStoreAPI / HasRulesAPI helpers read-lock it and then call the exported
// HasClients helper, which read-locks the same mutex again. A query fans out
// through EndpointSet.GetStoreClients, which walks the endpoints and asks each
// one HasStoreAPI. Meanwhile the periodic EndpointSet.Update refreshes every
// endpoint's Info and stores the result with endpointRef.Update, a write lock.
// If that writer arrives between the two read locks of HasStoreAPI, Go's
// RWMutex makes the nested RLock wait for the writer, and the writer waits for
// the outer read lock: the query goroutine, the update loop and then every
// later query (blocked behind the endpoint set's read lock or the queued
// writer) hang. The fix drops the nested call and reads er.clients directly.
//
// This is the fixed version.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type StoreClient interface{ Addr() string }
type RulesClient interface{ Addr() string }

type grpcClient struct{ addr string }

func (c grpcClient) Addr() string { return c.addr }

type endpointClients struct {
	store StoreClient
	rule  RulesClient
}

type endpointMetadata struct {
	ComponentType string
	MinTime       int64
	MaxTime       int64
}

type endpointRef struct {
	mtx      sync.RWMutex
	addr     string
	metadata *endpointMetadata
	clients  *endpointClients
}

func (er *endpointRef) HasClients() bool {
	er.mtx.RLock()
	defer er.mtx.RUnlock()
	return er.clients != nil
}

func (er *endpointRef) HasStoreAPI() bool {
	er.mtx.RLock()
	defer er.mtx.RUnlock()
	time.Sleep(50 * time.Millisecond) // a busy querier; the refresh loop gets in here
	return er.clients != nil && er.clients.store != nil
}

func (er *endpointRef) HasRulesAPI() bool {
	er.mtx.RLock()
	defer er.mtx.RUnlock()
	return er.clients != nil && er.clients.rule != nil
}

func (er *endpointRef) Update(metadata *endpointMetadata) {
	er.mtx.Lock()
	defer er.mtx.Unlock()
	clients := &endpointClients{}
	if metadata.ComponentType == "store" || metadata.ComponentType == "sidecar" {
		clients.store = grpcClient{er.addr}
	}
	if metadata.ComponentType == "rule" || metadata.ComponentType == "sidecar" {
		clients.rule = grpcClient{er.addr}
	}
	er.metadata = metadata
	er.clients = clients
}

type EndpointSet struct {
	endpointsMtx sync.RWMutex
	endpoints    map[string]*endpointRef
	infoFn       func(ctx context.Context, addr string) *endpointMetadata
}

func (e *EndpointSet) updateEndpoint(ctx context.Context, er *endpointRef) {
	metadata := e.infoFn(ctx, er.addr)
	er.Update(metadata)
}

// Update refreshes the Info of all known endpoints concurrently.
func (e *EndpointSet) Update(ctx context.Context) {
	e.endpointsMtx.RLock()
	refs := make([]*endpointRef, 0, len(e.endpoints))
	for _, er := range e.endpoints {
		refs = append(refs, er)
	}
	e.endpointsMtx.RUnlock()

	var wg sync.WaitGroup
	for _, er := range refs {
		wg.Add(1)
		go func(er *endpointRef) {
			defer wg.Done()
			e.updateEndpoint(ctx, er)
		}(er)
	}
	wg.Wait()
}

// GetStoreClients returns a list of all active stores.
func (e *EndpointSet) GetStoreClients() []StoreClient {
	e.endpointsMtx.RLock()
	defer e.endpointsMtx.RUnlock()
	stores := make([]StoreClient, 0, len(e.endpoints))
	for _, er := range e.endpoints {
		if er.HasStoreAPI() {
			stores = append(stores, er.clients.store)
		}
	}
	return stores
}

func main() {
	sidecar := &endpointRef{addr: "prometheus-0-sidecar:10901"}
	sidecar.Update(&endpointMetadata{ComponentType: "sidecar"})
	es := &EndpointSet{
		endpoints: map[string]*endpointRef{sidecar.addr: sidecar},
		infoFn: func(context.Context, string) *endpointMetadata {
			return &endpointMetadata{ComponentType: "sidecar", MaxTime: time.Now().UnixMilli()}
		},
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // a PromQL query fanning out through the proxy store
		defer wg.Done()
		fmt.Println("store clients:", len(es.GetStoreClients()))
	}()
	go func() { // the querier's endpoint refresh loop
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		es.Update(context.Background())
		fmt.Println("endpoints refreshed")
	}()
	wg.Wait()
}
