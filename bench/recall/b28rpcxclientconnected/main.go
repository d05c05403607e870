// Project: smallnest/rpcx (client/xclient.go, client/plugin.go)
// Bug:     PR #582 "fix dead lock when call broadcast in DoClientConnected callback" (2021).
//
// xClient.getCachedClient holds xClient.mu while it dials a new Client and runs
// Plugins.DoClientConnected on the new connection. A ClientConnectedPlugin that
// uses the same XClient (here: Broadcast an "Online" announcement) re-enters
// xClient.Broadcast, which does c.mu.Lock() on the mutex this goroutine already
// holds; every later Call/Go/Broadcast on the XClient hangs too.
// Deadlocking acquisition: c.mu.Lock() in xClient.Broadcast (re-entered from the plugin).
package main

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
)

type ClientConnectedPlugin interface {
	ClientConnected(net.Conn) (net.Conn, error)
}

type PluginContainer interface {
	DoClientConnected(net.Conn) (net.Conn, error)
}

type pluginContainer struct{ plugins []interface{} }

func (p *pluginContainer) DoClientConnected(conn net.Conn) (net.Conn, error) {
	var err error
	for i := range p.plugins {
		if plugin, ok := p.plugins[i].(ClientConnectedPlugin); ok {
			if conn, err = plugin.ClientConnected(conn); err != nil {
				return conn, err
			}
		}
	}
	return conn, nil
}

type Client struct{ Conn net.Conn }

func (c *Client) Connect(network, address string) error {
	c.Conn, _ = net.Pipe() // stands in for net.DialTimeout + handshake
	return nil
}
func (c *Client) Call(ctx context.Context, servicePath, serviceMethod string, args, reply interface{}) error {
	return nil // request/response over c.Conn elided
}
func (c *Client) GetConn() net.Conn { return c.Conn }

type XClient interface {
	Broadcast(ctx context.Context, serviceMethod string, args, reply interface{}) error
}

type xClient struct {
	servicePath  string
	cachedClient map[string]*Client
	mu           sync.RWMutex
	servers      map[string]string
	selector     func() string
	Plugins      PluginContainer
}

func (c *xClient) selectClient(ctx context.Context) (string, *Client, error) {
	c.mu.Lock()
	k := c.selector()
	c.mu.Unlock()
	client, err := c.getCachedClient(k)
	return k, client, err
}

func (c *xClient) generateClient(k string) (*Client, error) {
	client := &Client{}
	return client, client.Connect("tcp", k)
}

func (c *xClient) getCachedClient(k string) (*Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	client := c.cachedClient[k]
	if client == nil {
		var err error
		if client, err = c.generateClient(k); err != nil {
			return nil, err
		}
		if c.Plugins != nil {
			c.Plugins.DoClientConnected(client.GetConn()) // user plugin runs inside the critical section
		}
		c.cachedClient[k] = client
	}
	return client, nil
}

func (c *xClient) getCachedClientWithoutLock(k string) (*Client, error) {
	client := c.cachedClient[k]
	if client == nil {
		var err error
		if client, err = c.generateClient(k); err != nil {
			return nil, err
		}
		if c.Plugins != nil {
			c.Plugins.DoClientConnected(client.GetConn())
		}
		c.cachedClient[k] = client
	}
	return client, nil
}

func (c *xClient) Call(ctx context.Context, serviceMethod string, args, reply interface{}) error {
	_, client, err := c.selectClient(ctx)
	if err != nil {
		return err
	}
	return client.Call(ctx, c.servicePath, serviceMethod, args, reply)
}

func (c *xClient) Broadcast(ctx context.Context, serviceMethod string, args, reply interface{}) error {
	clients := make(map[string]*Client)
	c.mu.Lock() // already held by getCachedClient further up this goroutine's stack
	for k := range c.servers {
		if client, err := c.getCachedClientWithoutLock(k); err == nil {
			clients[k] = client
		}
	}
	c.mu.Unlock()
	for _, client := range clients { // (fanned out in goroutines in rpcx)
		_ = client.Call(ctx, c.servicePath, serviceMethod, args, reply)
	}
	return nil
}

// presencePlugin announces this node to all servers once its first connection is up.
type presencePlugin struct {
	xc        XClient
	announced atomic.Bool
}

func (p *presencePlugin) ClientConnected(conn net.Conn) (net.Conn, error) {
	if p.announced.CompareAndSwap(false, true) {
		var reply string
		_ = p.xc.Broadcast(context.Background(), "Online", "game-node-7", &reply)
	}
	return conn, nil
}

func main() {
	servers := map[string]string{"tcp@10.0.0.1:8972": "", "tcp@10.0.0.2:8972": ""}
	xc := &xClient{servicePath: "Arith", cachedClient: map[string]*Client{}, servers: servers,
		selector: func() string { return "tcp@10.0.0.1:8972" }}
	xc.Plugins = &pluginContainer{plugins: []interface{}{&presencePlugin{xc: xc}}}

	var reply int
	fmt.Println("Call:", xc.Call(context.Background(), "Mul", [2]int{10, 20}, &reply))
}
