// Project: tailscale/tailscale (wgengine/magicsock/magicsock.go: Conn.SetStaticEndpoints, Conn.ReSTUN; ipn/ipnlocal config reload)
// Issue: tailscale/tailscale#17247 "magicsock: fix deadlock in SetStaticEndpoints" (updates tailscale/corp#32600)
// Fixed twin: as in #17247, the early return for unchanged endpoints (line 32) unlocks the mutex
// SetStaticEndpoints took (line 29), so Close (line 77) proceeds after a no-op reload.
package main

import (
	"fmt"
	"net/netip"
	"reflect"
	"sync"
	"time"
)

// Conn is a trimmed magicsock.Conn.
type Conn struct {
	mu                    sync.Mutex // guards the fields below
	closed                bool
	staticEndpoints       []netip.AddrPort
	endpointsUpdateActive bool
	wantEndpointsUpdate   string
	lastEndpoints         []netip.AddrPort
	updatesDone           sync.WaitGroup
}

// SetStaticEndpoints sets static endpoints to the provided value and triggers
// an asynchronous update of the endpoints that this node advertises.
func (c *Conn) SetStaticEndpoints(ep []netip.AddrPort) {
	c.mu.Lock()
	if reflect.DeepEqual(c.staticEndpoints, ep) {
		c.mu.Unlock()
		return
	}
	c.staticEndpoints = ep
	c.mu.Unlock()
	// Technically this is not a reSTUNning reason, but ReSTUN does what we need
	// at this point: calling updateEndpoints or queueing an update if one is running.
	c.ReSTUN("static-endpoint-change")
}

// ReSTUN triggers an address discovery.
func (c *Conn) ReSTUN(why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if c.endpointsUpdateActive {
		if c.wantEndpointsUpdate != why {
			c.wantEndpointsUpdate = why
		}
		return
	}
	c.endpointsUpdateActive = true
	c.updatesDone.Add(1)
	go c.updateEndpoints(why)
}

func (c *Conn) updateEndpoints(why string) {
	defer c.updatesDone.Done()
	c.mu.Lock()
	eps := append([]netip.AddrPort(nil), c.staticEndpoints...)
	c.mu.Unlock()

	time.Sleep(10 * time.Millisecond) // STUN round trips
	eps = append(eps, netip.MustParseAddrPort("203.0.113.9:41641"))

	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastEndpoints = eps
	c.endpointsUpdateActive = false
	fmt.Printf("endpoints updated (%s): %v\n", why, eps)
}

// Close closes the connection.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	c.updatesDone.Wait()
	return nil
}

// reloadConfig is what LocalBackend does when tailscaled re-reads its config file.
func reloadConfig(c *Conn, static []string) {
	var eps []netip.AddrPort
	for _, s := range static {
		eps = append(eps, netip.MustParseAddrPort(s))
	}
	c.SetStaticEndpoints(eps)
}

func main() {
	c := &Conn{}
	conf := []string{"198.51.100.7:41641"}

	reloadConfig(c, conf)
	time.Sleep(50 * time.Millisecond) // let the endpoint update finish
	reloadConfig(c, conf)             // unchanged static endpoints

	if err := c.Close(); err != nil {
		fmt.Println("close:", err)
	}
	fmt.Println("magicsock closed")
}
