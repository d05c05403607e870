// Project: google/gvisor (pkg/tcpip/transport/tcp, netstack)
// Bug: endpoint.connectLocked held e.mu and, while resetting receive state,
//
//	also e.rcvQueueMu; it then called e.waitForHandshakeLocked(), which
//	drops e.mu while sleeping and re-acquires it when the handshake
//	completes. The protocol goroutine completes the handshake holding e.mu
//	and then takes e.rcvQueueMu to queue data piggy-backed on the SYN-ACK.
//	connect re-locks e.mu while holding rcvQueueMu (rcvQueueMu -> mu) and
//	the protocol goroutine holds mu waiting for rcvQueueMu (mu -> rcvQueueMu).
//
// Fix: release rcvQueueMu before waiting for the handshake.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type EndpointState int

const (
	StateInitial EndpointState = iota
	StateSynSent
	StateEstablished
	StateClose
)

var (
	ErrAlreadyConnecting = errors.New("endpoint is already connecting")
	ErrConnectionRefused = errors.New("connection was refused")
)

type FullAddress struct {
	NIC  int
	Addr string
	Port uint16
}

type TransportEndpointID struct {
	LocalPort     uint16
	LocalAddress  string
	RemotePort    uint16
	RemoteAddress string
}

type segment struct {
	flags  uint8
	seq    uint32
	ack    uint32
	window uint16
	data   []byte
}

const (
	flagSyn = 1 << 1
	flagAck = 1 << 4
)

type endpoint struct {
	// mu protects state and id.
	mu    sync.Mutex
	state EndpointState
	id    TransportEndpointID

	// rcvQueueMu protects the receive queue. Lock order: mu, then rcvQueueMu.
	rcvQueueMu sync.Mutex
	rcvQueue   [][]byte
	rcvBufUsed int

	sndNxt        uint32
	segmentQueue  chan *segment
	handshakeDone chan struct{}
}

func newEndpoint() *endpoint {
	return &endpoint{
		id:            TransportEndpointID{LocalAddress: "10.0.0.1", LocalPort: 40001},
		segmentQueue:  make(chan *segment, 8),
		handshakeDone: make(chan struct{}),
	}
}

func (e *endpoint) Connect(addr FullAddress) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.connectLocked(addr)
}

func (e *endpoint) connectLocked(addr FullAddress) error {
	if e.state != StateInitial {
		return ErrAlreadyConnecting
	}
	e.id.RemoteAddress, e.id.RemotePort = addr.Addr, addr.Port
	e.state = StateSynSent

	e.rcvQueueMu.Lock()
	e.rcvQueue = nil
	e.rcvBufUsed = 0
	e.rcvQueueMu.Unlock() // FIX: released before the handshake wait

	go e.protocolMainLoop()
	return e.waitForHandshakeLocked()
}

// waitForHandshakeLocked is called with e.mu held. It releases e.mu while it
// sleeps and re-acquires it before returning.
func (e *endpoint) waitForHandshakeLocked() error {
	e.mu.Unlock()
	<-e.handshakeDone
	e.mu.Lock()
	if e.state != StateEstablished {
		return ErrConnectionRefused
	}
	return nil
}

func (e *endpoint) protocolMainLoop() {
	e.sndNxt = 1000 // SYN sent by the dispatcher
	seg := <-e.segmentQueue
	e.mu.Lock()
	defer e.mu.Unlock()
	if seg.flags&(flagSyn|flagAck) != flagSyn|flagAck {
		e.state = StateClose
		close(e.handshakeDone)
		return
	}
	e.state = StateEstablished
	close(e.handshakeDone)
	e.handleSegmentLocked(seg)
}

func (e *endpoint) handleSegmentLocked(seg *segment) {
	if len(seg.data) == 0 {
		return
	}
	e.rcvQueueMu.Lock()
	e.rcvQueue = append(e.rcvQueue, seg.data)
	e.rcvBufUsed += len(seg.data)
	e.rcvQueueMu.Unlock()
}

func (e *endpoint) Read() []byte {
	e.rcvQueueMu.Lock()
	defer e.rcvQueueMu.Unlock()
	if len(e.rcvQueue) == 0 {
		return nil
	}
	v := e.rcvQueue[0]
	e.rcvQueue = e.rcvQueue[1:]
	e.rcvBufUsed -= len(v)
	return v
}

func main() {
	ep := newEndpoint()
	// link endpoint dispatcher: the peer answers with SYN-ACK + data (TFO)
	go func() {
		time.Sleep(20 * time.Millisecond)
		ep.segmentQueue <- &segment{flags: flagSyn | flagAck, seq: 5000, ack: 1001,
			window: 65535, data: []byte("HTTP/1.1 200 OK\r\n")}
	}()
	if err := ep.Connect(FullAddress{NIC: 1, Addr: "10.0.0.2", Port: 80}); err != nil {
		fmt.Println("connect:", err)
		return
	}
	time.Sleep(10 * time.Millisecond)
	fmt.Printf("connected, read %q\n", ep.Read())
}
