// Project: hashicorp/memberlist (memberlist.go) -- fixed twin
// Fix applied: hashicorp/memberlist#123, Shutdown serializes on a dedicated shutdownLock, so
// packetListen can still take nodeLock.RLock while the transport waits for its listeners.

package main

import (
	"net"
	"runtime"
	"sync"
	"sync/atomic"
)

type Packet struct {
	Buf  []byte
	From string
}

type udpConn struct { // stands in for the transport's *net.UDPConn
	inbound chan []byte
	closed  chan struct{}
}

func (c *udpConn) ReadFrom(buf []byte) (int, string, error) {
	select {
	case <-c.closed:
		return 0, "", net.ErrClosed
	case b := <-c.inbound:
		return copy(buf, b), "10.0.0.2:7946", nil
	}
}

type NetTransport struct {
	packetCh    chan *Packet
	udpListener *udpConn
	wg          sync.WaitGroup
	shutdown    int32
	sent        atomic.Int64
}

func (t *NetTransport) WriteTo(b []byte, addr string) error { t.sent.Add(1); return nil }

func (t *NetTransport) udpListen(conn *udpConn) {
	defer t.wg.Done()
	for {
		buf := make([]byte, 65536)
		n, addr, err := conn.ReadFrom(buf)
		if err != nil {
			if atomic.LoadInt32(&t.shutdown) == 1 {
				break
			}
			continue
		}
		t.packetCh <- &Packet{Buf: buf[:n], From: addr}
	}
}

func (t *NetTransport) Shutdown() {
	atomic.StoreInt32(&t.shutdown, 1)
	close(t.udpListener.closed)
	t.wg.Wait()
}

type Memberlist struct {
	shutdownLock sync.Mutex // serializes Shutdown instead of nodeLock
	nodeLock     sync.RWMutex
	nodeMap      map[string]uint8 // address -> highest protocol version the node speaks
	transport    *NetTransport
	shutdownCh   chan struct{}
}

func (m *Memberlist) packetListen() {
	for {
		select {
		case packet := <-m.transport.packetCh: // ingestPacket -> handlePing: answer with an ackResp
			if len(packet.Buf) > 0 && packet.Buf[0] == 0 { // pingMsg
				m.rawSendMsgPacket(packet.From, []byte{2}) // ackRespMsg
			}
		case <-m.shutdownCh:
			return
		}
	}
}

func (m *Memberlist) rawSendMsgPacket(addr string, msg []byte) error {
	m.nodeLock.RLock()
	pmax, ok := m.nodeMap[addr]
	m.nodeLock.RUnlock()
	if ok && pmax >= 5 { // the recipient understands CRCs
		msg = append(msg, 0, 0, 0, 0)
	}
	return m.transport.WriteTo(msg, addr)
}

func (m *Memberlist) Shutdown() {
	m.shutdownLock.Lock()
	defer m.shutdownLock.Unlock()
	m.transport.Shutdown()
	close(m.shutdownCh)
}

func main() {
	conn := &udpConn{inbound: make(chan []byte), closed: make(chan struct{})}
	t := &NetTransport{packetCh: make(chan *Packet), udpListener: conn}
	m := &Memberlist{nodeMap: map[string]uint8{"10.0.0.2:7946": 5}, transport: t, shutdownCh: make(chan struct{})}
	t.wg.Add(1)
	go t.udpListen(conn)
	go m.packetListen()
	go func() { // probes from peers keep arriving while the agent leaves
		for {
			conn.inbound <- []byte{0}
		}
	}()
	for t.sent.Load() < 1000 {
		runtime.Gosched()
	}
	m.Shutdown() // the agent leaves the cluster
}
