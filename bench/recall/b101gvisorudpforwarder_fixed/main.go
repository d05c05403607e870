// Project: google/gvisor netstack (pkg/tcpip/transport/udp/forwarder.go ForwarderRequest.CreateEndpoint, pkg/tcpip/transport/udp/endpoint.go endpoint.Close), 2024 (reported by celzero/firestack issue #98, fixed by gVisor PR #10990 "tcpip/udp: deadlock in forwarder.go:CreateEndpoint").
// Bug: CreateEndpoint locks the new endpoint's e.mu (deferred unlock) while it registers the endpoint with the stack, and when RegisterTransportEndpoint fails (two datagrams of the same flow reach the forwarder concurrently and the second registration gets ErrPortInUse) it cleans up with the exported ep.Close(), which locks e.mu again, so the packet processing goroutine blocks forever on the endpoint mutex it already holds. The fix adds closeLocked and calls it from CreateEndpoint.
package main

import (
	"fmt"
	"sync"
)

type EventMask uint64

const (
	EventIn, EventOut, EventErr, EventHUp EventMask = 0x01, 0x04, 0x08, 0x10
)

type Queue struct {
	mu        sync.RWMutex
	listeners []func(EventMask)
}

func (q *Queue) Notify(mask EventMask) {
	q.mu.RLock()
	for _, l := range q.listeners {
		l(mask)
	}
	q.mu.RUnlock()
}

type Error interface{ String() string }

type ErrPortInUse struct{}

func (*ErrPortInUse) String() string { return "port is in use" }

type (
	Address                 string
	NICID                   int32
	NetworkProtocolNumber   uint32
	TransportProtocolNumber uint32
)

const (
	IPv4ProtocolNumber NetworkProtocolNumber   = 0x0800
	ProtocolNumber     TransportProtocolNumber = 17
)

type TransportEndpointID struct {
	LocalPort     uint16
	LocalAddress  Address
	RemotePort    uint16
	RemoteAddress Address
}

type PacketBuffer struct {
	NICID                 NICID
	NetworkProtocolNumber NetworkProtocolNumber
}

type TransportEndpoint interface {
	HandlePacket(id TransportEndpointID, pkt *PacketBuffer)
}

type transportDemuxer struct {
	mu        sync.RWMutex
	endpoints map[TransportEndpointID]TransportEndpoint
}

type Stack struct {
	demux            *transportDemuxer
	transportHandler func(TransportEndpointID, *PacketBuffer) bool
}

func (s *Stack) SetTransportProtocolHandler(p TransportProtocolNumber, h func(TransportEndpointID, *PacketBuffer) bool) {
	s.transportHandler = h
}

func (s *Stack) RegisterTransportEndpoint(netProtos []NetworkProtocolNumber, protocol TransportProtocolNumber, id TransportEndpointID, ep TransportEndpoint, bindToDevice NICID) Error {
	s.demux.mu.Lock()
	defer s.demux.mu.Unlock()
	if _, ok := s.demux.endpoints[id]; ok {
		return &ErrPortInUse{}
	}
	s.demux.endpoints[id] = ep
	return nil
}

func (s *Stack) UnregisterTransportEndpoint(netProtos []NetworkProtocolNumber, protocol TransportProtocolNumber, id TransportEndpointID, ep TransportEndpoint, bindToDevice NICID) {
	s.demux.mu.Lock()
	defer s.demux.mu.Unlock()
	if s.demux.endpoints[id] == ep {
		delete(s.demux.endpoints, id)
	}
}

// DeliverTransportPacket delivers to a registered endpoint, or else to the
// protocol's default handler (the forwarder).
func (s *Stack) DeliverTransportPacket(id TransportEndpointID, pkt *PacketBuffer) {
	s.demux.mu.RLock()
	ep := s.demux.endpoints[id]
	s.demux.mu.RUnlock()
	if ep != nil {
		ep.HandlePacket(id, pkt)
		return
	}
	s.transportHandler(id, pkt)
}

type EndpointState int

const (
	StateInitial EndpointState = iota
	StateBound
	StateConnected
	StateClosed
)

type endpoint struct {
	stack       *Stack
	waiterQueue *Queue

	mu                 sync.RWMutex
	state              EndpointState
	ID                 TransportEndpointID
	RegisterNICID      NICID
	effectiveNetProtos []NetworkProtocolNumber

	rcvMu     sync.Mutex
	rcvReady  bool
	rcvList   []*PacketBuffer
	rcvClosed bool
}

func newEndpoint(s *Stack, netProto NetworkProtocolNumber, waiterQueue *Queue) *endpoint {
	return &endpoint{stack: s, waiterQueue: waiterQueue}
}

// Close puts the endpoint in a closed state and frees all resources
// associated with it.
func (e *endpoint) Close() {
	e.mu.Lock()
	e.closeLocked()
	e.mu.Unlock()
}

// closeLocked is Close with e.mu already held.
func (e *endpoint) closeLocked() {
	switch e.state {
	case StateBound, StateConnected:
		e.stack.UnregisterTransportEndpoint(e.effectiveNetProtos, ProtocolNumber, e.ID, e, e.RegisterNICID)
	}

	e.rcvMu.Lock()
	e.rcvClosed = true
	e.rcvList = nil
	e.rcvMu.Unlock()

	e.state = StateClosed

	e.waiterQueue.Notify(EventHUp | EventErr | EventIn | EventOut)
}

func (e *endpoint) HandlePacket(id TransportEndpointID, pkt *PacketBuffer) {
	e.rcvMu.Lock()
	if !e.rcvReady || e.rcvClosed {
		e.rcvMu.Unlock()
		return
	}
	e.rcvList = append(e.rcvList, pkt)
	e.rcvMu.Unlock()
	e.waiterQueue.Notify(EventIn)
}

type Forwarder struct {
	handler func(*ForwarderRequest)
	stack   *Stack
}

func NewForwarder(s *Stack, handler func(*ForwarderRequest)) *Forwarder {
	return &Forwarder{stack: s, handler: handler}
}

func (f *Forwarder) HandlePacket(id TransportEndpointID, pkt *PacketBuffer) bool {
	f.handler(&ForwarderRequest{stack: f.stack, id: id, pkt: pkt})
	return true
}

type ForwarderRequest struct {
	stack *Stack
	id    TransportEndpointID
	pkt   *PacketBuffer
}

func (r *ForwarderRequest) ID() TransportEndpointID { return r.id }

// CreateEndpoint creates a connected UDP endpoint for the session request.
func (r *ForwarderRequest) CreateEndpoint(queue *Queue) (*endpoint, Error) {
	ep := newEndpoint(r.stack, r.pkt.NetworkProtocolNumber, queue)
	ep.mu.Lock()
	defer ep.mu.Unlock()

	if err := r.stack.RegisterTransportEndpoint([]NetworkProtocolNumber{r.pkt.NetworkProtocolNumber}, ProtocolNumber, r.id, ep, r.pkt.NICID); err != nil {
		ep.closeLocked()
		return nil, err
	}

	ep.ID = r.id
	ep.RegisterNICID = r.pkt.NICID
	ep.effectiveNetProtos = []NetworkProtocolNumber{r.pkt.NetworkProtocolNumber}
	ep.state = StateConnected

	ep.rcvMu.Lock()
	ep.rcvReady = true
	ep.rcvMu.Unlock()

	ep.HandlePacket(r.id, r.pkt)

	return ep, nil
}

func main() {
	s := &Stack{demux: &transportDemuxer{endpoints: map[TransportEndpointID]TransportEndpoint{}}}

	// The embedder (firestack's UDP handler) creates an endpoint per flow. Two
	// datagrams of the same flow reach the forwarder before either endpoint is
	// registered.
	arrived, release := make(chan struct{}, 2), make(chan struct{})
	fwd := NewForwarder(s, func(r *ForwarderRequest) {
		arrived <- struct{}{}
		<-release
		var wq Queue
		ep, err := r.CreateEndpoint(&wq)
		if err != nil {
			fmt.Println("udp: create endpoint:", err.String())
			return
		}
		fmt.Println("udp: flow", r.ID().RemotePort, "connected, state", ep.state)
	})
	s.SetTransportProtocolHandler(ProtocolNumber, fwd.HandlePacket)

	id := TransportEndpointID{LocalPort: 53, LocalAddress: "10.111.222.3", RemotePort: 40000, RemoteAddress: "10.111.222.1"}
	done := make(chan struct{}, 2)
	for i := 0; i < 2; i++ {
		go func() {
			s.DeliverTransportPacket(id, &PacketBuffer{NICID: 1, NetworkProtocolNumber: IPv4ProtocolNumber})
			done <- struct{}{}
		}()
	}
	<-arrived
	<-arrived
	close(release)
	<-done
	<-done
	fmt.Println("ok")
}
