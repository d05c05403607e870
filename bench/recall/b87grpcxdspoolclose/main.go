// Project: grpc/grpc-go (xds/internal/xdsclient/client_refcounted.go Pool.clientRefCountedClose, pool.go, clientimpl.go, xds_channel, xds resolver), v1.66-v1.70, January 2025.
// Bug: Pool.clientRefCountedClose held the pool mutex p.mu while it closed the last reference of an xDS client, and closing the client closes its channels to the management server. When the management server address is itself an xds:/// target, that transport is a gRPC ClientConn whose xds resolver holds a reference on a second client from the same pool, so closing the outer client re-enters clientRefCountedClose and locks p.mu again on the same goroutine (fixed by PR #8011 "xdsclient: release lock before attempting to close underlying transport", regressed and fixed again by PR #8445 for nested xDS channels, with test PR #8448).
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

type XDSClient interface {
	WatchResource(typeURL, name string)
}

// OnceFunc mirrors internal/grpcsync.OnceFunc.
func OnceFunc(f func()) func() {
	var once sync.Once
	return func() { once.Do(f) }
}

type bootstrapConfig struct{ serverURI string }

type Pool struct {
	mu      sync.Mutex
	clients map[string]*clientRefCounted
	config  map[string]*bootstrapConfig // per client name, for the test
}

var DefaultPool = &Pool{clients: map[string]*clientRefCounted{}, config: map[string]*bootstrapConfig{}}

func (p *Pool) NewClient(name string) (XDSClient, func(), error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.clients[name]; c != nil {
		c.incrRef()
		return c, OnceFunc(func() { p.clientRefCountedClose(name) }), nil
	}
	c := newClientImpl(name, p.config[name])
	client := &clientRefCounted{clientImpl: c, refCount: 1}
	p.clients[name] = client
	return client, OnceFunc(func() { p.clientRefCountedClose(name) }), nil
}

func (p *Pool) clientRefCountedClose(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	client, ok := p.clients[name]
	if !ok {
		return
	}
	if client.decrRef() != 0 {
		return
	}
	client.clientImpl.close()
	delete(p.clients, name)
}

type clientRefCounted struct {
	*clientImpl
	refCount int32
}

func (c *clientRefCounted) incrRef() int32 { return atomic.AddInt32(&c.refCount, 1) }
func (c *clientRefCounted) decrRef() int32 { return atomic.AddInt32(&c.refCount, -1) }

type clientImpl struct {
	name       string
	config     *bootstrapConfig
	channelsMu sync.Mutex
	channels   map[string]*xdsChannel // keyed by server URI
}

func newClientImpl(name string, cfg *bootstrapConfig) *clientImpl {
	return &clientImpl{name: name, config: cfg, channels: map[string]*xdsChannel{}}
}

func (c *clientImpl) WatchResource(typeURL, name string) {
	c.channelsMu.Lock()
	ch, ok := c.channels[c.config.serverURI]
	c.channelsMu.Unlock()
	if !ok {
		// The transport is a new gRPC channel; it is created lazily and
		// without channelsMu held.
		ch = &xdsChannel{serverURI: c.config.serverURI, transport: newGRPCTransport(c.config.serverURI)}
		c.channelsMu.Lock()
		c.channels[c.config.serverURI] = ch
		c.channelsMu.Unlock()
	}
	fmt.Printf("%s: watching %s %q via %s\n", c.name, typeURL, name, ch.serverURI)
}

func (c *clientImpl) close() {
	// Channel close cannot be invoked with channelsMu held.
	c.channelsMu.Lock()
	channels := c.channels
	c.channels = map[string]*xdsChannel{}
	c.channelsMu.Unlock()
	for _, ch := range channels {
		ch.close()
	}
	fmt.Println(c.name, "closed")
}

type xdsChannel struct {
	serverURI string
	transport Transport
}

func (x *xdsChannel) close() { x.transport.Close() }

type Transport interface{ Close() error }

// grpcTransport talks ADS to the management server over a grpc.ClientConn.
type grpcTransport struct{ cc *ClientConn }

func newGRPCTransport(uri string) *grpcTransport { return &grpcTransport{cc: NewClient(uri)} }

func (t *grpcTransport) Close() error { return t.cc.Close() }

// ClientConn is the minimal grpc.ClientConn: it owns a resolver.
type ClientConn struct {
	target   string
	mu       sync.Mutex
	resolver Resolver
}

type Resolver interface{ Close() }

type dnsResolver struct{}

func (dnsResolver) Close() {}

// xdsResolver is xds/internal/resolver: it holds a reference on a pooled xDS client.
type xdsResolver struct {
	xdsClient      XDSClient
	xdsClientClose func()
}

func (r *xdsResolver) Close() { r.xdsClientClose() }

func NewClient(target string) *ClientConn {
	cc := &ClientConn{target: target}
	if len(target) > 7 && target[:7] == "xds:///" {
		client, closeFn, _ := DefaultPool.NewClient(target)
		client.WatchResource("Listener", target[7:])
		cc.resolver = &xdsResolver{xdsClient: client, xdsClientClose: closeFn}
	} else {
		cc.resolver = dnsResolver{}
	}
	return cc
}

func (cc *ClientConn) Close() error {
	cc.mu.Lock()
	r := cc.resolver
	cc.resolver = nil
	cc.mu.Unlock()
	if r != nil {
		r.Close()
	}
	return nil
}

func main() {
	// The management server is itself resolved through xDS.
	DefaultPool.config["xds:///echo"] = &bootstrapConfig{serverURI: "xds:///mgmt"}
	DefaultPool.config["xds:///mgmt"] = &bootstrapConfig{serverURI: "dns:///bootstrap-mgmt:443"}

	client, closeClient, _ := DefaultPool.NewClient("xds:///echo")
	client.WatchResource("Listener", "echo")
	// The application closes its channel to xds:///echo.
	closeClient()
	fmt.Println("done")
}
