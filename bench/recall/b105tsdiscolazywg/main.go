// Project: tailscale/tailscale (wgengine/magicsock/magicsock.go Conn.handleDiscoMessage and Conn.CreateEndpoint, wgengine/userspace.go noteReceiveActivity and maybeReconfigWireguardLocked, tailscale/wireguard-go device Reconfig), August 2020, lazy WireGuard config (TS_DEBUG_TRIM_WIREGUARD).
// Bug: handleDiscoMessage holds magicsock's Conn.mu and, for a disco ping from a known node that was trimmed out of the WireGuard config, calls the noteRecvActivity hook; the engine takes wgLock and reconfigures wireguard-go, which creates the peer's endpoint through the Bind's CreateEndpoint, and that is Conn.CreateEndpoint locking Conn.mu again, so the receive path deadlocks on its own mutex (issue #637 "hello.ipn.dev deadlock with opt-in lazy wireguard config"; the fix releases Conn.mu around noteRecvActivity and rechecks state after re-locking).
package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

type (
	NodeKey  string
	DiscoKey string
)

type Node struct {
	Key       NodeKey
	DiscoKey  DiscoKey
	Endpoints []string
}

// ---- tailscale/wireguard-go (conn + device) ----

type Endpoint interface{ DstToString() string }

type Bind interface {
	CreateEndpoint(pubKey NodeKey, endpoints string) (Endpoint, error)
}

type Peer struct {
	sync.RWMutex
	endpoint Endpoint
}

type Device struct {
	net struct {
		sync.RWMutex
		bind Bind
	}
	peers struct {
		sync.RWMutex
		keyMap map[NodeKey]*Peer
	}
}

type PeerConfig struct {
	PublicKey NodeKey
	Endpoints string
}

type Config struct{ Peers []PeerConfig }

// Reconfig replaces the device's peers with cfg.Peers (tailscale fork).
func (device *Device) Reconfig(cfg *Config) error {
	device.net.RLock()
	defer device.net.RUnlock()
	device.peers.Lock()
	defer device.peers.Unlock()
	for _, pc := range cfg.Peers {
		if _, ok := device.peers.keyMap[pc.PublicKey]; ok {
			continue
		}
		ep, err := device.net.bind.CreateEndpoint(pc.PublicKey, pc.Endpoints)
		if err != nil {
			return err
		}
		device.peers.keyMap[pc.PublicKey] = &Peer{endpoint: ep}
	}
	return nil
}

// ---- wgengine ----

type userspaceEngine struct {
	wgdev          *Device
	wgLock         sync.Mutex // serializes all wgdev operations
	lastCfgFull    Config
	recvActivityAt map[DiscoKey]time.Time
	trimmedDisco   map[DiscoKey]bool
}

func (e *userspaceEngine) noteReceiveActivity(dk DiscoKey) {
	e.wgLock.Lock()
	defer e.wgLock.Unlock()
	if _, ok := e.recvActivityAt[dk]; !ok {
		return // not a tracked peer
	}
	e.recvActivityAt[dk] = time.Now()
	if e.trimmedDisco[dk] {
		e.maybeReconfigWireguardLocked()
	}
}

func (e *userspaceEngine) maybeReconfigWireguardLocked() error {
	min := Config{}
	for _, p := range e.lastCfgFull.Peers {
		dk := discoKeyFromEndpoints(p.Endpoints)
		if time.Since(e.recvActivityAt[dk]) < 5*time.Minute {
			min.Peers = append(min.Peers, p)
			delete(e.trimmedDisco, dk)
		}
	}
	return e.wgdev.Reconfig(&min)
}

func discoKeyFromEndpoints(s string) DiscoKey {
	for _, ep := range strings.Split(s, ",") {
		if h, ok := strings.CutSuffix(ep, ".disco.tailscale:12345"); ok {
			return DiscoKey(h)
		}
	}
	return ""
}

// ---- magicsock ----

type discoEndpoint struct {
	c         *Conn
	publicKey NodeKey
	discoKey  DiscoKey
}

func (de *discoEndpoint) DstToString() string { return string(de.discoKey) + ".disco.tailscale:12345" }

type Conn struct {
	mu               sync.Mutex
	closed           bool
	nodeOfDisco      map[DiscoKey]*Node
	endpointOfDisco  map[DiscoKey]*discoEndpoint
	noteRecvActivity func(DiscoKey) // or nil; set by the engine for lazy wireguard config
}

func (c *Conn) CreateEndpoint(pubKey NodeKey, addrs string) (Endpoint, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	dk := discoKeyFromEndpoints(addrs)
	if dk == "" {
		return nil, errors.New("no disco key in endpoints")
	}
	de := &discoEndpoint{c: c, publicKey: pubKey, discoKey: dk}
	c.endpointOfDisco[dk] = de
	return de, nil
}

func (c *Conn) handleDiscoMessage(msg []byte, sender DiscoKey) (isDiscoMsg bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return true
	}
	peerNode, ok := c.nodeOfDisco[sender]
	if !ok {
		return true // unknown peer
	}
	de, ok := c.endpointOfDisco[sender]
	if !ok {
		// Idle peer that is not in the wireguard config yet: ask the engine
		// to add it, which ends up calling our CreateEndpoint.
		fmt.Printf("magicsock: got disco message from idle peer, starting lazy conf for %v\n", peerNode.Key)
		if c.noteRecvActivity == nil {
			return true
		}
		c.noteRecvActivity(sender)
		if de, ok = c.endpointOfDisco[sender]; !ok {
			return true
		}
	}
	fmt.Printf("magicsock: disco: %q from %v (%v)\n", msg, de.publicKey, de.discoKey)
	return true
}

func main() {
	node := &Node{Key: "nodekey:7a1e", DiscoKey: "d15c0", Endpoints: []string{"100.101.1.2:41641"}}
	c := &Conn{nodeOfDisco: map[DiscoKey]*Node{node.DiscoKey: node}, endpointOfDisco: map[DiscoKey]*discoEndpoint{}}
	dev := &Device{}
	dev.net.bind = c
	dev.peers.keyMap = map[NodeKey]*Peer{}
	e := &userspaceEngine{
		wgdev:          dev,
		lastCfgFull:    Config{Peers: []PeerConfig{{node.Key, "100.101.1.2:41641,d15c0.disco.tailscale:12345"}}},
		recvActivityAt: map[DiscoKey]time.Time{node.DiscoKey: {}},
		trimmedDisco:   map[DiscoKey]bool{node.DiscoKey: true},
	}
	c.noteRecvActivity = e.noteReceiveActivity

	// The UDP receive loop gets a disco ping from the idle peer.
	c.handleDiscoMessage([]byte("ping"), node.DiscoKey)
	fmt.Println("peers in wireguard:", len(dev.peers.keyMap))
}
