// Project: netbird (client/internal/peer/conn.go, client/internal/engine.go)
// Bug: peer.Conn invokes the onConnected callback (installed by the engine via
// SetOnConnected) while still holding conn.mu. The engine callback takes
// e.syncMsgMux. Concurrently the engine handles a network-map sync under
// e.syncMsgMux and removes the peer, calling conn.Close() which needs conn.mu:
// conn.mu -> syncMsgMux versus syncMsgMux -> conn.mu.
// Fix: copy the callback under conn.mu and invoke it after unlocking.

package b21netbirdconn

import (
	"errors"
	"sync"
	"testing"
	"time"
)

type ConnStatus int

const (
	StatusDisconnected ConnStatus = iota
	StatusConnecting
	StatusConnected
)

type ConnConfig struct {
	Key         string
	LocalKey    string
	WgAllowedIP string
	Timeout     time.Duration
}

type Conn struct {
	config ConnConfig
	mu     sync.Mutex
	status ConnStatus
	closed bool

	onConnected    func(remoteWireGuardKey string, wireGuardIP string)
	onDisconnected func(remotePeer string, wgIP string)
}

func NewConn(config ConnConfig) *Conn {
	return &Conn{config: config, status: StatusDisconnected}
}

func (conn *Conn) SetOnConnected(handler func(remoteWireGuardKey string, wireGuardIP string)) {
	conn.onConnected = handler
}

func (conn *Conn) SetOnDisconnected(handler func(remotePeer string, wgIP string)) {
	conn.onDisconnected = handler
}

func (conn *Conn) configureWGEndpoint() {
	time.Sleep(50 * time.Millisecond) // wgctrl: set peer endpoint
}

// onICEConnectionIsReady is called by the ICE agent when a pair is selected.
func (conn *Conn) onICEConnectionIsReady() {
	conn.mu.Lock()
	defer conn.mu.Unlock()

	if conn.closed {
		return
	}
	conn.configureWGEndpoint()
	conn.status = StatusConnected

	if conn.onConnected != nil {
		conn.onConnected(conn.config.Key, conn.config.WgAllowedIP)
	}
}

func (conn *Conn) Close() error {
	conn.mu.Lock()
	defer conn.mu.Unlock()

	if conn.closed {
		return errors.New("connection already closed")
	}
	conn.closed = true
	conn.status = StatusDisconnected
	return nil
}

func (conn *Conn) Status() ConnStatus {
	conn.mu.Lock()
	defer conn.mu.Unlock()
	return conn.status
}

type Engine struct {
	syncMsgMux *sync.Mutex
	peerConns  map[string]*Conn
	routes     map[string]string
	serial     uint64
}

func NewEngine() *Engine {
	return &Engine{
		syncMsgMux: &sync.Mutex{},
		peerConns:  make(map[string]*Conn),
		routes:     make(map[string]string),
	}
}

func (e *Engine) createPeerConn(pubKey, allowedIP string) *Conn {
	conn := NewConn(ConnConfig{Key: pubKey, WgAllowedIP: allowedIP, Timeout: time.Second})
	conn.SetOnConnected(e.onPeerConnected)
	conn.SetOnDisconnected(func(remotePeer, wgIP string) {})
	return conn
}

func (e *Engine) onPeerConnected(remoteWireGuardKey string, wireGuardIP string) {
	e.syncMsgMux.Lock()
	defer e.syncMsgMux.Unlock()

	e.routes[remoteWireGuardKey] = wireGuardIP
}

func (e *Engine) removePeer(peerKey string) error {
	conn, ok := e.peerConns[peerKey]
	if !ok {
		return nil
	}
	delete(e.peerConns, peerKey)
	return conn.Close()
}

// handleSync applies a network map from the management service.
func (e *Engine) handleSync(serial uint64, removed []string) error {
	e.syncMsgMux.Lock()
	defer e.syncMsgMux.Unlock()

	if serial <= e.serial {
		return nil
	}
	for _, p := range removed {
		if err := e.removePeer(p); err != nil {
			return err
		}
	}
	e.serial = serial
	return nil
}

func TestPeerConnectedWhileRemovedBySync(t *testing.T) {
	e := NewEngine()
	conn := e.createPeerConn("peerA", "100.64.0.2/32")
	e.peerConns["peerA"] = conn

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		conn.onICEConnectionIsReady()
	}()
	go func() {
		defer wg.Done()
		time.Sleep(15 * time.Millisecond)
		_ = e.handleSync(2, []string{"peerA"})
	}()
	wg.Wait()
}
