// Project: btcsuite/btcd (connmgr/connmanager.go) as driven by lightningnetwork/lnd (server.go), 2017 (approximate).
// Bug: the ConnManager's connHandler goroutine ran the OnConnection callback synchronously; lnd's callback (server.OutboundPeerConnected) takes server.mu, while server.DisconnectPeer holds server.mu and calls connMgr.Remove, which blocks handing a request to that same connHandler goroutine, so the handler waits for server.mu and the lock holder waits for the handler. The fix runs the callbacks in their own goroutines.
package main

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// ConnReq is the connection request to a network address.
type ConnReq struct {
	id        uint64
	Addr      string
	Permanent bool
	conn      net.Conn
}

func (c *ConnReq) ID() uint64 { return atomic.LoadUint64(&c.id) }

// Config holds the configuration options related to the connection manager.
type Config struct {
	OnConnection func(*ConnReq, net.Conn)
	Dial         func(addr string) (net.Conn, error)
}

type (
	registerPending struct {
		c    *ConnReq
		done chan struct{}
	}
	handleConnected struct {
		c    *ConnReq
		conn net.Conn
	}
	handleDisconnected struct {
		id    uint64
		retry bool
	}
)

// ConnManager provides a manager to handle network connections.
type ConnManager struct {
	connReqCount uint64
	cfg          Config
	wg           sync.WaitGroup
	requests     chan interface{}
	quit         chan struct{}
}

func New(cfg *Config) *ConnManager {
	return &ConnManager{cfg: *cfg, requests: make(chan interface{}), quit: make(chan struct{})}
}

func (cm *ConnManager) Start() { cm.wg.Add(1); go cm.connHandler() }

func (cm *ConnManager) Stop() { close(cm.quit); cm.wg.Wait() }

// connHandler handles all connection related requests. It must be run as a goroutine.
func (cm *ConnManager) connHandler() {
	defer cm.wg.Done()
	pending := make(map[uint64]*ConnReq)
	conns := make(map[uint64]*ConnReq)
	for {
		select {
		case req := <-cm.requests:
			switch msg := req.(type) {
			case registerPending:
				pending[msg.c.id] = msg.c
				close(msg.done)
			case handleConnected:
				connReq := msg.c
				if _, ok := pending[connReq.id]; !ok {
					msg.conn.Close()
					continue
				}
				connReq.conn = msg.conn
				conns[connReq.id] = connReq
				delete(pending, connReq.id)
				if cm.cfg.OnConnection != nil {
					go cm.cfg.OnConnection(connReq, msg.conn)
				}

			case handleDisconnected:
				connReq, ok := conns[msg.id]
				if !ok {
					delete(pending, msg.id) // canceled before it connected
					continue
				}
				delete(conns, msg.id)
				if connReq.conn != nil {
					connReq.conn.Close()
				}
			}
		case <-cm.quit:
			return
		}
	}
}

// Connect assigns an id and dials a connection to the address of the connection request.
func (cm *ConnManager) Connect(c *ConnReq) {
	if atomic.LoadUint64(&c.id) == 0 {
		atomic.StoreUint64(&c.id, atomic.AddUint64(&cm.connReqCount, 1))
		done := make(chan struct{})
		select {
		case cm.requests <- registerPending{c, done}:
		case <-cm.quit:
			return
		}
		<-done
	}
	conn, err := cm.cfg.Dial(c.Addr)
	if err != nil {
		return // btcd would schedule a retry here
	}
	select {
	case cm.requests <- handleConnected{c, conn}:
	case <-cm.quit:
	}
}

// Remove removes the connection corresponding to the given connection id.
func (cm *ConnManager) Remove(id uint64) {
	select {
	case cm.requests <- handleDisconnected{id, false}:
	case <-cm.quit:
	}
}

// server is lnd's server with the parts that touch the connection manager.
type server struct {
	mu                 sync.RWMutex
	connMgr            *ConnManager
	persistentConnReqs map[string][]*ConnReq
	peersByPub         map[string]string
	callbacks          sync.WaitGroup
}

// OutboundPeerConnected is the OnConnection callback of the connection manager.
func (s *server) OutboundPeerConnected(connReq *ConnReq, conn net.Conn) {
	defer s.callbacks.Done()
	pubStr := connReq.Addr // lnd uses the remote node's compressed pubkey
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.persistentConnReqs[pubStr]; !ok {
		conn.Close() // the request was canceled while we were dialing
		return
	}
	s.peersByPub[pubStr] = conn.RemoteAddr().String()
}

func (s *server) cancelConnReqs(pubStr string) {
	for _, connReq := range s.persistentConnReqs[pubStr] {
		if connID := connReq.ID(); connID != 0 {
			s.connMgr.Remove(connID)
		}
	}
	delete(s.persistentConnReqs, pubStr)
}

// DisconnectPeer sends the request to server to close the connection with peer.
func (s *server) DisconnectPeer(pubStr string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.peersByPub[pubStr]; !ok {
		return fmt.Errorf("peer %s is not connected", pubStr)
	}
	time.Sleep(50 * time.Millisecond) // test hook: other work done under s.mu
	s.cancelConnReqs(pubStr)
	delete(s.peersByPub, pubStr)
	return nil
}

func main() {
	s := &server{persistentConnReqs: map[string][]*ConnReq{}, peersByPub: map[string]string{}}
	s.connMgr = New(&Config{
		OnConnection: s.OutboundPeerConnected,
		Dial: func(addr string) (net.Conn, error) {
			time.Sleep(30 * time.Millisecond) // TCP + brontide handshake
			c1, _ := net.Pipe()
			return c1, nil
		},
	})
	s.connMgr.Start()
	pub := "02aa@10.0.0.7:9735"
	s.peersByPub[pub] = "inbound"
	req := &ConnReq{Addr: pub, Permanent: true}
	s.persistentConnReqs[pub] = append(s.persistentConnReqs[pub], req)
	s.callbacks.Add(1)
	go s.connMgr.Connect(req) // persistent reconnection attempt

	time.Sleep(10 * time.Millisecond)
	fmt.Println("disconnect:", s.DisconnectPeer(pub)) // lncli disconnect
	s.callbacks.Wait()
	s.connMgr.Stop()
	fmt.Println("peers:", len(s.peersByPub))
}
