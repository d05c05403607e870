// Project: yggdrasil-network/yggdrasil-go (src/tuntap/tun.go TunAdapter.handler and TunAdapter.wrap, src/tuntap/conn.go tunConn.close), v0.3.6 development, mid-2019 (approximate).
// Bug: TunAdapter.wrap takes tun.mutex to register the session wrapper of a new yggdrasil Conn in addrToConn and subnetToConn and, when a wrapper for the same address or subnet already exists (the remote node reconnected), closes the old one with tunConn.close, which locks tun.mutex again. The listener goroutine deadlocks on its own mutex and every later packet from the TUN interface blocks on tun.mutex too. The fix split out tunConn._close_nomutex and calls it from wrap while the mutex is held.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

const tunConnTimeout = 2 * time.Minute

type NodeID [64]byte
type Address [16]byte
type Subnet [8]byte

func AddrForNodeID(nid *NodeID) *Address {
	var a Address
	a[0] = 0x02
	copy(a[1:], nid[:15])
	return &a
}

func SubnetForNodeID(nid *NodeID) *Subnet {
	var s Subnet
	s[0] = 0x03
	copy(s[1:], nid[:7])
	return &s
}

// Conn is the yggdrasil session connection (src/yggdrasil/conn.go).
type Conn struct {
	mutex   sync.RWMutex
	nodeID  *NodeID
	closed  bool
	closeCh chan struct{}
	readBuf chan []byte
}

func (c *Conn) RemoteAddr() NodeID {
	c.mutex.RLock()
	defer c.mutex.RUnlock()
	return *c.nodeID
}

func (c *Conn) Read(b []byte) (int, error) {
	select {
	case p := <-c.readBuf:
		return copy(b, p), nil
	case <-c.closeCh:
		return 0, errors.New("session closed")
	}
}

func (c *Conn) Close() error {
	c.mutex.Lock()
	defer c.mutex.Unlock()
	if !c.closed {
		c.closed = true
		close(c.closeCh)
	}
	return nil
}

type Listener struct{ conn chan *Conn }

func (l *Listener) Accept() (*Conn, error) {
	c, ok := <-l.conn
	if !ok {
		return nil, errors.New("listener closed")
	}
	return c, nil
}

type TunAdapter struct {
	listener     *Listener
	mutex        sync.RWMutex // Protects the below
	addrToConn   map[Address]*tunConn
	subnetToConn map[Subnet]*tunConn
	iface        chan []byte
}

type tunConn struct {
	tun   *TunAdapter
	conn  *Conn
	addr  Address
	snet  Subnet
	send  chan []byte
	stop  chan struct{}
	alive chan struct{}
}

func (s *tunConn) close() {
	s.tun.mutex.Lock()
	defer s.tun.mutex.Unlock()
	s._close_nomutex()
}

// _close_nomutex is called with tun.mutex held (fix).
func (s *tunConn) _close_nomutex() {
	s.conn.Close()
	delete(s.tun.addrToConn, s.addr)
	delete(s.tun.subnetToConn, s.snet)
	func() {
		defer func() { recover() }()
		close(s.stop) // Closes reader/timer goroutines
	}()
}

func (s *tunConn) reader() error {
	b := make([]byte, 65535)
	for {
		n, err := s.conn.Read(b)
		if err != nil {
			return err
		}
		s.tun.iface <- append([]byte(nil), b[:n]...)
		select {
		case s.alive <- struct{}{}:
		default:
		}
	}
}

func (s *tunConn) checkForTimeouts() error {
	timer := time.NewTimer(tunConnTimeout)
	defer timer.Stop()
	defer s.close()
	for {
		select {
		case _, ok := <-s.alive:
			if !ok {
				return errors.New("connection closed")
			}
			timer.Reset(tunConnTimeout)
		case <-timer.C:
			return errors.New("timed out")
		}
	}
}

func (tun *TunAdapter) handler() error {
	for {
		// Accept the incoming connection
		conn, err := tun.listener.Accept()
		if err != nil {
			return err
		}
		if _, err := tun.wrap(conn); err != nil {
			// Something went wrong when storing the connection, typically that
			// something already exists for this address or subnet
			fmt.Println("TUN/TAP handler wrap:", err)
		}
	}
}

func (tun *TunAdapter) wrap(conn *Conn) (c *tunConn, err error) {
	// Prepare a session wrapper for the given connection
	s := tunConn{tun: tun, conn: conn, send: make(chan []byte, 32), stop: make(chan struct{}), alive: make(chan struct{}, 1)}
	c = &s
	// Get the remote address and subnet of the other side
	remoteNodeID := conn.RemoteAddr()
	s.addr = *AddrForNodeID(&remoteNodeID)
	s.snet = *SubnetForNodeID(&remoteNodeID)
	// Work out if this is already a destination we already know about
	tun.mutex.Lock()
	defer tun.mutex.Unlock()
	atc, aok := tun.addrToConn[s.addr]
	stc, sok := tun.subnetToConn[s.snet]
	// If we know about a connection for this destination already then assume it
	// is no longer valid and close it
	if aok {
		atc._close_nomutex()
		err = errors.New("replaced connection for address")
	} else if sok {
		stc._close_nomutex()
		err = errors.New("replaced connection for subnet")
	}
	// Save the session wrapper so that we can look it up quickly next time
	// we receive a packet through the interface for this address
	tun.addrToConn[s.addr] = &s
	tun.subnetToConn[s.snet] = &s
	// Start the connection goroutines
	go s.reader()
	go s.checkForTimeouts()
	return c, err
}

func newConn(nid *NodeID) *Conn {
	return &Conn{nodeID: nid, closeCh: make(chan struct{}), readBuf: make(chan []byte, 1)}
}

func main() {
	tun := &TunAdapter{listener: &Listener{conn: make(chan *Conn, 2)}, iface: make(chan []byte, 8),
		addrToConn: map[Address]*tunConn{}, subnetToConn: map[Subnet]*tunConn{}}
	remote := &NodeID{0xab, 0xcd}
	first := newConn(remote)
	first.readBuf <- []byte("ipv6 packet")
	tun.listener.conn <- first
	tun.listener.conn <- newConn(remote) // the remote node restarted and opened a new session
	close(tun.listener.conn)

	done := make(chan error)
	go func() { done <- tun.handler() }()
	fmt.Println("handler stopped:", <-done)
	tun.mutex.RLock()
	fmt.Printf("%d session(s) for %x\n", len(tun.addrToConn), *AddrForNodeID(remote))
	tun.mutex.RUnlock()
}
