// Project: rpcxio/rpcx-gateway, the HTTP gateway of the rpcx RPC framework
// (smallnest/rpcx), January 2018.
// Files/functions: gateway.go: Gateway.handleRequest (per-service XClient
// cache under g.mu); rpcx client/consul_discovery.go: ConsulDiscovery.Clone,
// NewConsulDiscoveryStore; client/xclient.go: NewXClient; the ServiceDiscovery
// interface; net/http's per-connection panic recovery.
// Issue: rpcxio/rpcx-gateway#5 "deadlock if rpcx-service is not registed in
// consul" (fixed by smallnest: "fixed. Thanks").
//
// handleRequest write-locks g.mu to look up the XClient for the service path
// in the request header and, on a miss, builds one with
// g.serviceDiscovery.Clone(servicePath). For the Consul discovery, Clone calls
// NewConsulDiscoveryStore, which lists the service's directory in the KV
// store and panics when the path does not exist, i.e. when the service has
// never registered. net/http recovers the panic for that one connection and
// keeps serving, but g.mu was never unlocked: the next HTTP request for any
// service blocks on g.mu.Lock and the gateway stops answering.
//
// The fix releases the lock on every way out of the critical section (the
// lookup runs in a closure with a deferred Unlock), so a failing Clone no
// longer leaves the gateway locked.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// ---- libkv store (reduced) ----

type KVPair struct {
	Key   string
	Value []byte
}

type Store interface {
	List(directory string) ([]*KVPair, error)
}

var ErrKeyNotFound = errors.New("Key not found in store")

type consulStore struct{ dirs map[string][]*KVPair }

func (s *consulStore) List(directory string) ([]*KVPair, error) {
	ps, ok := s.dirs[directory]
	if !ok {
		return nil, ErrKeyNotFound
	}
	return ps, nil
}

// ---- rpcx client (reduced) ----

type ServiceDiscovery interface {
	GetServices() []*KVPair
	Clone(servicePath string) ServiceDiscovery
}

type ConsulDiscovery struct {
	basePath string
	kv       Store
	pairs    []*KVPair
}

func NewConsulDiscoveryStore(basePath string, kv Store) ServiceDiscovery {
	d := &ConsulDiscovery{basePath: basePath, kv: kv}
	ps, err := kv.List(basePath)
	if err != nil {
		log.Printf("cannot get services of from registry: %v, err: %v", basePath, err)
		panic(err)
	}
	d.pairs = ps
	return d
}

func (d ConsulDiscovery) GetServices() []*KVPair { return d.pairs }

func (d ConsulDiscovery) Clone(servicePath string) ServiceDiscovery {
	return NewConsulDiscoveryStore(d.basePath+"/"+servicePath, d.kv)
}

type FailMode int
type SelectMode int
type Option struct{ Retries int }

type XClient interface {
	Call(ctx context.Context, serviceMethod string, args, reply interface{}) error
}

type xClient struct {
	servicePath string
	discovery   ServiceDiscovery
}

func NewXClient(servicePath string, failMode FailMode, selectMode SelectMode, discovery ServiceDiscovery, option Option) XClient {
	return &xClient{servicePath: servicePath, discovery: discovery}
}

func (c *xClient) Call(ctx context.Context, serviceMethod string, args, reply interface{}) error {
	if len(c.discovery.GetServices()) == 0 {
		return errors.New("rpcx: no server available")
	}
	*(reply.(*string)) = "ok from " + c.servicePath + "." + serviceMethod
	return nil
}

// ---- rpcx-gateway ----

const (
	XServicePath   = "X-RPCX-ServicePath"
	XServiceMethod = "X-RPCX-ServiceMethod"
)

type Gateway struct {
	serviceDiscovery ServiceDiscovery
	FailMode         FailMode
	SelectMode       SelectMode
	Option           Option

	mu       sync.RWMutex
	xclients map[string]XClient
}

func (g *Gateway) handleRequest(w http.ResponseWriter, r *http.Request) {
	servicePath := r.Header.Get(XServicePath)
	serviceMethod := r.Header.Get(XServiceMethod)
	if servicePath == "" || serviceMethod == "" {
		http.Error(w, "empty servicepath or servicemethod", http.StatusBadRequest)
		return
	}

	var xc XClient
	g.mu.Lock()
	if g.xclients[servicePath] == nil {
		g.xclients[servicePath] = NewXClient(servicePath, g.FailMode, g.SelectMode, g.serviceDiscovery.Clone(servicePath), g.Option)
	}
	xc = g.xclients[servicePath]
	g.mu.Unlock()

	var reply string
	if err := xc.Call(r.Context(), serviceMethod, nil, &reply); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	fmt.Fprint(w, reply)
}

// serve mirrors net/http's conn.serve: a panicking handler is logged and
// only its own connection is closed.
func serve(h http.HandlerFunc, r *http.Request) string {
	w := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if err := recover(); err != nil {
				log.Printf("http: panic serving %s: %v", r.RemoteAddr, err)
			}
		}()
		h(w, r)
	}()
	<-done
	return strings.TrimSpace(w.Body.String())
}

func request(servicePath, method string) *http.Request {
	r := httptest.NewRequest("POST", "http://gateway:9981/", strings.NewReader("{}"))
	r.Header.Set(XServicePath, servicePath)
	r.Header.Set(XServiceMethod, method)
	return r
}

func main() {
	kv := &consulStore{dirs: map[string][]*KVPair{
		"rpcx_test":       {{Key: "rpcx_test/Arith"}},
		"rpcx_test/Arith": {{Key: "rpcx_test/Arith/tcp@127.0.0.1:8972"}},
	}}
	g := &Gateway{
		serviceDiscovery: NewConsulDiscoveryStore("rpcx_test", kv),
		xclients:         make(map[string]XClient),
	}

	// A client asks for a service that never registered in consul.
	fmt.Println("1:", serve(g.handleRequest, request("Arith2", "Mul")))
	// The next request for a registered service.
	fmt.Println("2:", serve(g.handleRequest, request("Arith", "Mul")))
}
