// Project: tailscale/tailscale (wgengine/magicsock/magicsock.go, derp/derphttp/derphttp_client.go)
// Bug: lock-order inversion between magicsock.Conn.mu and derphttp.Client.mu (issue #3726).
// derphttp.Client.connect holds Client.mu while dialing and calls a closure magicsock installed
// on the client (from derpWriteChanOfAddr) that takes Conn.mu; meanwhile a status request holds
// Conn.mu and walks c.activeDerp calling client methods that take Client.mu.
// Upstream fix: PR #3729 "wgengine/magicsock: fix lock ordering deadlock with derphttp":
// the value the hook needs is kept a second time outside Conn.mu ("the same data stored in
// two places"), so the hook no longer locks Conn.mu. Exactly which hook/field was involved
// is approximated here (an address-family preference read from the last netcheck report).
package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// ---- derp/derphttp ----

type AddressFamilySelector interface {
	PreferIPv6() bool
}

type Client struct {
	mu           sync.Mutex
	url          string
	connected    bool
	serverPubKey string
	addrFamSel   AddressFamilySelector
}

func (c *Client) SetAddressFamilySelector(s AddressFamilySelector) {
	c.mu.Lock()
	c.addrFamSel = s
	c.mu.Unlock()
}

func (c *Client) connect(ctx context.Context, caller string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.connected {
		return nil
	}
	time.Sleep(2 * time.Millisecond) // resolve the DERP hostname (A + AAAA)
	network := "tcp4"
	if c.addrFamSel != nil && c.addrFamSel.PreferIPv6() { // calls back into magicsock under c.mu
		network = "tcp6"
	}
	c.serverPubKey = "nodekey:" + network + ":" + c.url
	c.connected = true
	return nil
}

func (c *Client) Send(ctx context.Context, dst string, pkt []byte) error {
	return c.connect(ctx, "derphttp.Client.Send")
}

func (c *Client) ServerPublicKey() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.serverPubKey
}

// ---- wgengine/magicsock ----

type netcheckReport struct{ IPv6 bool }

type activeDerp struct {
	c       *Client
	writeCh chan []byte
}

type Conn struct {
	mu                 sync.Mutex
	activeDerp         map[int]activeDerp
	lastNetCheckReport *netcheckReport

	// preferIPv6 duplicates lastNetCheckReport.IPv6 so that callbacks invoked
	// from derphttp (with Client.mu held) never need Conn.mu.
	preferIPv6 atomic.Bool
}

func (c *Conn) setNetcheckReport(r *netcheckReport) {
	c.mu.Lock()
	c.lastNetCheckReport = r
	c.preferIPv6.Store(r != nil && r.IPv6)
	c.mu.Unlock()
}

type derpAddrFamSelector struct{ c *Conn }

func (s derpAddrFamSelector) PreferIPv6() bool {
	return s.c.preferIPv6.Load() // no Conn.mu: safe to call with Client.mu held
}

func (c *Conn) derpWriteChanOfAddr(regionID int) chan<- []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ad, ok := c.activeDerp[regionID]; ok {
		return ad.writeCh
	}
	dc := &Client{url: fmt.Sprintf("https://derp%d.tailscale.com/derp", regionID)}
	dc.SetAddressFamilySelector(derpAddrFamSelector{c})
	ch := make(chan []byte, 8)
	c.activeDerp[regionID] = activeDerp{c: dc, writeCh: ch}
	go c.runDerpWriter(context.Background(), dc, ch)
	return ch
}

func (c *Conn) runDerpWriter(ctx context.Context, dc *Client, ch <-chan []byte) {
	for pkt := range ch {
		if err := dc.Send(ctx, "peer", pkt); err != nil {
			return
		}
	}
}

// DERPStatus is used by the engine's status reporting (RequestStatus).
func (c *Conn) DERPStatus() map[int]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[int]string, len(c.activeDerp))
	for regionID, ad := range c.activeDerp {
		out[regionID] = ad.c.ServerPublicKey() // Conn.mu -> Client.mu
	}
	return out
}

func main() {
	c := &Conn{activeDerp: map[int]activeDerp{}}
	c.setNetcheckReport(&netcheckReport{IPv6: true})
	ch := c.derpWriteChanOfAddr(1)
	ch <- []byte("wireguard packet") // derp writer starts connecting

	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(time.Millisecond) // status request arrives while the dial is in progress
		fmt.Println(c.DERPStatus())
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
		fmt.Println("status request timed out")
	}
}
