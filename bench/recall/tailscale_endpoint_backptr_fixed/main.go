// Project: tailscale (wgengine/magicsock)
// Bug: lock-order inversion between magicsock.Conn.mu and endpoint.mu. The
//
//	documented order is Conn.mu before endpoint.mu, and Conn.SetNetworkMap
//	follows it (c.mu -> de.mu). But endpoint.heartbeat, holding de.mu, went
//	back to its parent through the de.c back-pointer and called
//	c.noteActiveDERP, which takes c.mu (de.mu -> c.mu): AB-BA deadlock.
//
// Fix: heartbeat snapshots what it needs under de.mu, releases de.mu, and
//
//	only then calls into the Conn.
package main

import (
	"fmt"
	"sync"
	"time"
)

type nodeKey string

type node struct {
	Key       nodeKey
	DERP      int
	Endpoints []string
}

type netMap struct {
	SelfKey nodeKey
	Peers   []*node
}

type endpointState struct {
	lastPing    time.Time
	lastGotPing time.Time
	latency     time.Duration
}

// Conn is the magicsock connection shared by all peers.
type Conn struct {
	mu         sync.Mutex
	peerMap    map[nodeKey]*endpoint
	netMap     *netMap
	activeDerp map[int]time.Time
	myDerp     int
	closed     bool
	pingsSent  int
}

// endpoint is a wireguard peer; it keeps a pointer back to its Conn.
type endpoint struct {
	c         *Conn // parent; c.mu must be acquired before mu
	publicKey nodeKey

	mu            sync.Mutex
	derpRegion    int
	bestAddr      string
	endpointState map[string]*endpointState
	lastSend      time.Time
}

func (c *Conn) SetNetworkMap(nm *netMap) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.netMap = nm
	for _, n := range nm.Peers {
		de, ok := c.peerMap[n.Key]
		if !ok {
			de = &endpoint{c: c, publicKey: n.Key, endpointState: map[string]*endpointState{}}
			c.peerMap[n.Key] = de
		}
		de.updateFromNode(n)
	}
}

func (de *endpoint) updateFromNode(n *node) {
	de.mu.Lock()
	defer de.mu.Unlock()
	de.derpRegion = n.DERP
	for _, ep := range n.Endpoints {
		if _, ok := de.endpointState[ep]; !ok {
			de.endpointState[ep] = &endpointState{}
		}
	}
}

func (c *Conn) noteActiveDERP(region int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.activeDerp[region] = time.Now()
	c.pingsSent++
}

// sendDiscoPingsLocked writes disco pings to every candidate UDP path.
func (de *endpoint) sendDiscoPingsLocked(now time.Time) {
	for ep, st := range de.endpointState {
		_ = ep
		st.lastPing = now
		time.Sleep(40 * time.Millisecond) // blocking sendto
	}
}

func (de *endpoint) heartbeat() {
	de.mu.Lock()
	now := time.Now()
	de.lastSend = now
	de.sendDiscoPingsLocked(now)
	needDERP := de.bestAddr == ""
	region := de.derpRegion
	de.mu.Unlock()

	if needDERP {
		// No direct path yet: keep the DERP home warm. de.mu is released
		// before calling into the parent Conn.
		de.c.noteActiveDERP(region)
	}
}

func main() {
	c := &Conn{peerMap: map[nodeKey]*endpoint{}, activeDerp: map[int]time.Time{}, myDerp: 1}
	c.SetNetworkMap(&netMap{SelfKey: "nodekey:self", Peers: []*node{
		{Key: "nodekey:peer1", DERP: 2, Endpoints: []string{"192.168.1.20:41641", "198.51.100.7:41641"}},
	}})
	c.mu.Lock()
	de := c.peerMap["nodekey:peer1"]
	c.mu.Unlock()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // heartbeat timer
		defer wg.Done()
		de.heartbeat()
	}()
	go func() { // control client delivering a new netmap
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		c.SetNetworkMap(&netMap{SelfKey: "nodekey:self", Peers: []*node{
			{Key: "nodekey:peer1", DERP: 3, Endpoints: []string{"192.168.1.20:41641"}},
		}})
	}()
	wg.Wait()
	fmt.Println("pings sent:", c.pingsSent)
}
