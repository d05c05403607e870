// Project: quic-go (lucas-clemente/quic-go), master of November 2018 (v0.10-v0.11).
// Files/functions: packet_handler_map.go (packetHandlerMap.listen, handlePacket,
// Add), server.go (server.handlePacket, run, handleInitial).
// Issue: lucas-clemente/quic-go#1631 "Deadlock (missing RUnlock() in
// packetHandlerMap)"; fixed by a deferred RUnlock in handlePacket.
//
// The listen goroutine of the packet handler map calls handlePacket for every
// datagram; handlePacket read-locks h.mutex to look up the destination
// connection ID and unlocks by hand on each return path. The path for a
// short-header packet with an unknown connection ID that is not a stateless
// reset returns an error without RUnlock. The leaked read lock is harmless
// until a writer comes: when the server next accepts a connection,
// handleInitial registers the session through sessionHandler.Add, whose Lock
// waits for the leaked reader forever, and every later handlePacket queues
// behind it. The fix takes the read lock with a deferred unlock.
package main

import (
	"errors"
	"fmt"
	"net"
	"sync"
)

const MinStatelessResetSize = 21

type ConnectionID []byte

type Header struct {
	IsLongHeader     bool
	DestConnectionID ConnectionID
}

type receivedPacket struct{ hdr *Header }

// parseHeader stands in for wire.ParseHeader.
func parseHeader(data []byte, connIDLen int) (*Header, error) {
	if len(data) < 1+connIDLen {
		return nil, errors.New("packet too small")
	}
	return &Header{IsLongHeader: data[0]&0x80 != 0, DestConnectionID: ConnectionID(data[1 : 1+connIDLen])}, nil
}

type packetHandler interface {
	handlePacket(*receivedPacket)
	destroy(error)
}

type unknownPacketHandler interface {
	handlePacket(*receivedPacket)
}

type packetHandlerManager interface {
	Add(ConnectionID, packetHandler)
	SetServer(unknownPacketHandler)
}

type packetHandlerEntry struct {
	handler    packetHandler
	resetToken *[16]byte
}

type packetHandlerMap struct {
	mutex       sync.RWMutex
	conn        net.PacketConn
	connIDLen   int
	handlers    map[string]packetHandlerEntry
	resetTokens map[[16]byte]packetHandler
	server      unknownPacketHandler
}

func newPacketHandlerMap(conn net.PacketConn, connIDLen int) *packetHandlerMap {
	m := &packetHandlerMap{
		conn:        conn,
		connIDLen:   connIDLen,
		handlers:    make(map[string]packetHandlerEntry),
		resetTokens: make(map[[16]byte]packetHandler),
	}
	go m.listen()
	return m
}

func (h *packetHandlerMap) Add(id ConnectionID, handler packetHandler) {
	h.mutex.Lock()
	h.handlers[string(id)] = packetHandlerEntry{handler: handler}
	h.mutex.Unlock()
}

func (h *packetHandlerMap) SetServer(s unknownPacketHandler) {
	h.mutex.Lock()
	h.server = s
	h.mutex.Unlock()
}

func (h *packetHandlerMap) listen() {
	for {
		data := make([]byte, 1452)
		n, addr, err := h.conn.ReadFrom(data)
		if err != nil {
			return // the connection was closed
		}
		if err := h.handlePacket(addr, data[:n]); err != nil {
			fmt.Printf("error handling packet from %s: %s\n", addr, err)
		}
	}
}

func (h *packetHandlerMap) handlePacket(addr net.Addr, data []byte) error {
	hdr, err := parseHeader(data, h.connIDLen)
	// drop the packet if we can't parse the header
	if err != nil {
		return fmt.Errorf("error parsing header: %s", err)
	}
	p := &receivedPacket{hdr: hdr}

	h.mutex.RLock()
	defer h.mutex.RUnlock()

	handlerEntry, handlerFound := h.handlers[string(hdr.DestConnectionID)]

	if handlerFound { // existing session
		handlerEntry.handler.handlePacket(p)
		return nil
	}
	// No session found.
	// This might be a stateless reset.
	if !hdr.IsLongHeader {
		if len(data) >= MinStatelessResetSize {
			var token [16]byte
			copy(token[:], data[len(data)-16:])
			if sess, ok := h.resetTokens[token]; ok {
				sess.destroy(errors.New("received a stateless reset"))
				return nil
			}
		}
		// TODO(#943): send a stateless reset
		return fmt.Errorf("received a short header packet with an unexpected connection ID %x", hdr.DestConnectionID)
	}
	if h.server == nil { // no server set
		return fmt.Errorf("received a packet with an unexpected connection ID %x", hdr.DestConnectionID)
	}
	h.server.handlePacket(p)
	return nil
}

type session struct{ connID ConnectionID }

func (s *session) handlePacket(p *receivedPacket) {}
func (s *session) destroy(error)                  {}

type server struct {
	sessionHandler  packetHandlerManager
	receivedPackets chan *receivedPacket
	sessionQueue    chan *session
}

func (s *server) handlePacket(p *receivedPacket) { s.receivedPackets <- p }

func (s *server) run() {
	for p := range s.receivedPackets {
		if p.hdr.IsLongHeader {
			s.handleInitial(p)
		}
	}
}

func (s *server) handleInitial(p *receivedPacket) {
	sess := &session{connID: p.hdr.DestConnectionID}
	s.sessionHandler.Add(p.hdr.DestConnectionID, sess)
	s.sessionQueue <- sess
}

// chanPacketConn is an in-memory net.PacketConn fed by the test; only
// ReadFrom is used by the packet handler map.
type chanPacketConn struct {
	net.PacketConn
	in chan []byte
}

func (c *chanPacketConn) ReadFrom(b []byte) (int, net.Addr, error) {
	return copy(b, <-c.in), &net.UDPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 4433}, nil
}

func main() {
	conn := &chanPacketConn{in: make(chan []byte)}
	phm := newPacketHandlerMap(conn, 4)
	s := &server{sessionHandler: phm, receivedPackets: make(chan *receivedPacket, 100), sessionQueue: make(chan *session, 4)}
	phm.SetServer(s)
	go s.run()

	// A short-header packet for a connection this endpoint does not know,
	// then a client's Initial for a new connection.
	conn.in <- append([]byte{0x40, 0xde, 0xad, 0xbe, 0xef}, make([]byte, 30)...)
	conn.in <- append([]byte{0xc0, 0x01, 0x02, 0x03, 0x04}, make([]byte, 1200)...)

	sess := <-s.sessionQueue
	fmt.Printf("accepted connection %x\n", sess.connID)
}
