// Project: moby/moby (pkg/proxy/udp_proxy.go, the userland proxy for published UDP ports), Docker 1.1/1.2, mid 2014.
// Bug: UDPProxy.Run locks proxy.connTrackLock to look up the sender's conntrack entry and, when dialing the backend
// fails, logs and continues the read loop without unlocking, so the next datagram, Close and replyLoop cleanup block
// forever on connTrackLock (moby #7559, approximate; fixed by unlocking before continue).
package main

import (
	"encoding/binary"
	"errors"
	"log"
	"net"
	"strings"
	"sync"
)

const UDPBufSize = 65507

// udpConn is the part of *net.UDPConn the proxy uses; in-memory here.
type udpConn interface {
	ReadFromUDP(b []byte) (int, *net.UDPAddr, error)
	WriteToUDP(b []byte, addr *net.UDPAddr) (int, error)
	Read(b []byte) (int, error)
	Write(b []byte) (int, error)
	Close() error
}

// A net.Addr where the IP is split into two fields so you can use it as a key
// in a map:
type connTrackKey struct {
	IPHigh uint64
	IPLow  uint64
	Port   int
}

func newConnTrackKey(addr *net.UDPAddr) *connTrackKey {
	if len(addr.IP) == net.IPv4len {
		return &connTrackKey{IPHigh: 0, IPLow: uint64(binary.BigEndian.Uint32(addr.IP)), Port: addr.Port}
	}
	return &connTrackKey{
		IPHigh: binary.BigEndian.Uint64(addr.IP[:8]),
		IPLow:  binary.BigEndian.Uint64(addr.IP[8:]),
		Port:   addr.Port,
	}
}

type connTrackMap map[connTrackKey]udpConn

type UDPProxy struct {
	listener       udpConn
	frontendAddr   *net.UDPAddr
	backendAddr    *net.UDPAddr
	connTrackTable connTrackMap
	connTrackLock  sync.Mutex
}

func NewUDPProxy(listener udpConn, frontendAddr, backendAddr *net.UDPAddr) *UDPProxy {
	return &UDPProxy{
		listener:       listener,
		frontendAddr:   frontendAddr,
		backendAddr:    backendAddr,
		connTrackTable: make(connTrackMap),
	}
}

func (proxy *UDPProxy) replyLoop(proxyConn udpConn, clientAddr *net.UDPAddr, clientKey *connTrackKey) {
	defer func() {
		proxy.connTrackLock.Lock()
		delete(proxy.connTrackTable, *clientKey)
		proxy.connTrackLock.Unlock()
		proxyConn.Close()
	}()

	readBuf := make([]byte, UDPBufSize)
	for {
		read, err := proxyConn.Read(readBuf)
		if err != nil {
			return
		}
		for i := 0; i != read; {
			written, err := proxy.listener.WriteToUDP(readBuf[i:read], clientAddr)
			if err != nil {
				return
			}
			i += written
		}
	}
}

func (proxy *UDPProxy) Run() {
	readBuf := make([]byte, UDPBufSize)
	for {
		read, from, err := proxy.listener.ReadFromUDP(readBuf)
		if err != nil {
			if !isClosedError(err) {
				log.Printf("Stopping proxy on udp/%v for udp/%v (%s)", proxy.frontendAddr, proxy.backendAddr, err)
			}
			break
		}

		fromKey := newConnTrackKey(from)
		proxy.connTrackLock.Lock()
		proxyConn, hit := proxy.connTrackTable[*fromKey]
		if !hit {
			proxyConn, err = dialUDP("udp", nil, proxy.backendAddr)
			if err != nil {
				log.Printf("Can't proxy a datagram to udp/%s: %s\n", proxy.backendAddr, err)
				continue
			}
			proxy.connTrackTable[*fromKey] = proxyConn
			go proxy.replyLoop(proxyConn, from, fromKey)
		}
		proxy.connTrackLock.Unlock()
		for i := 0; i != read; {
			written, err := proxyConn.Write(readBuf[i:read])
			if err != nil {
				log.Printf("Can't proxy a datagram to udp/%s: %s\n", proxy.backendAddr, err)
				break
			}
			i += written
		}
	}
}

func (proxy *UDPProxy) Close() {
	proxy.listener.Close()
	proxy.connTrackLock.Lock()
	defer proxy.connTrackLock.Unlock()
	for _, conn := range proxy.connTrackTable {
		conn.Close()
	}
}

func isClosedError(err error) bool {
	return strings.HasSuffix(err.Error(), "use of closed network connection")
}

type datagram struct {
	data []byte
	from *net.UDPAddr
}

// memConn is an in-memory *net.UDPConn.
type memConn struct {
	in     chan datagram
	closed chan struct{}
}

func newMemConn(n int) *memConn {
	return &memConn{in: make(chan datagram, n), closed: make(chan struct{})}
}

var errClosed = errors.New("read udp: use of closed network connection")

func (c *memConn) ReadFromUDP(b []byte) (int, *net.UDPAddr, error) {
	d, ok := <-c.in
	if !ok {
		return 0, nil, errClosed
	}
	return copy(b, d.data), d.from, nil
}
func (c *memConn) WriteToUDP(b []byte, _ *net.UDPAddr) (int, error) { return len(b), nil }
func (c *memConn) Read(b []byte) (int, error)                       { <-c.closed; return 0, errClosed }
func (c *memConn) Write(b []byte) (int, error)                      { return len(b), nil }
func (c *memConn) Close() error {
	select {
	case <-c.closed:
	default:
		close(c.closed)
		close(c.in)
	}
	return nil
}

var dials int

// dialUDP stands in for net.DialUDP: the first dial fails (no route to the container yet).
var dialUDP = func(network string, laddr, raddr *net.UDPAddr) (udpConn, error) {
	dials++
	if dials == 1 {
		return nil, errors.New("dial udp " + raddr.String() + ": connect: network is unreachable")
	}
	return newMemConn(1), nil
}

func main() {
	listener := newMemConn(2)
	listener.in <- datagram{[]byte("dns query 1"), &net.UDPAddr{IP: net.IPv4(10, 0, 0, 7).To4(), Port: 5353}}
	listener.in <- datagram{[]byte("dns query 2"), &net.UDPAddr{IP: net.IPv4(10, 0, 0, 8).To4(), Port: 5353}}

	proxy := NewUDPProxy(listener, &net.UDPAddr{IP: net.IPv4zero, Port: 53}, &net.UDPAddr{IP: net.IPv4(172, 17, 0, 2), Port: 53})
	done := make(chan struct{})
	go func() { proxy.Run(); close(done) }()

	// docker stop / port unmap: the proxy is closed.
	proxy.Close()
	<-done
	log.Printf("proxy stopped after %d dials", dials)
}
