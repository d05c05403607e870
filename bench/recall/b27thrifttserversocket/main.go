// Project: apache/thrift (lib/go/thrift/server_socket.go, simple_server.go)
// Issue: THRIFT-4237; the first patch guarded TServerSocket.interrupted with an
// RWMutex but held the read lock across the blocking listener.Accept(). Fixed
// by PR #1304 "THRIFT-4237 Fix effective deadlock introduced by original patch".
//
// TSimpleServer.AcceptLoop runs in its own goroutine and calls
// p.serverTransport.Accept() (the TServerTransport interface). TServerSocket
// .Accept takes p.mu.RLock() with a deferred RUnlock and then blocks inside
// p.listener.Accept() until a client connects. TSimpleServer.Stop() calls
// p.serverTransport.Interrupt(), which needs p.mu.Lock() to set interrupted
// *before* it closes the listener -- but the listener close is the only thing
// that would make Accept return and drop the read lock: Stop hangs forever.
//
// Deadlocking acquisition: Interrupt `p.mu.Lock()` (line 106) while Accept
// holds p.mu.RLock (line 71) and waits in p.listener.Accept() (line 79).
package main

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// memListener stands in for the *net.TCPListener returned by net.Listen.
type memListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}
func (l *memListener) Close() error   { l.once.Do(func() { close(l.closed) }); return nil }
func (l *memListener) Addr() net.Addr { return &net.TCPAddr{Port: 9090} }

var netListen = func(network, address string) (net.Listener, error) {
	return &memListener{conns: make(chan net.Conn), closed: make(chan struct{})}, nil
}

var errTransportInterrupted = errors.New("Transport Interrupted")

type TTransport interface{ Close() error }
type TSocket struct{ conn net.Conn }

func (s *TSocket) Close() error { return s.conn.Close() }

type TServerTransport interface {
	Listen() error
	Accept() (TTransport, error)
	Close() error
	Interrupt() error
}

type TServerSocket struct {
	listener net.Listener
	addr     net.Addr
	// Protects the interrupted value to make it thread safe.
	mu          sync.RWMutex
	interrupted bool
}

func (p *TServerSocket) Accept() (TTransport, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.interrupted {
		return nil, errTransportInterrupted
	}
	if p.listener == nil {
		return nil, errors.New("No underlying server socket")
	}
	conn, err := p.listener.Accept()
	if err != nil {
		return nil, err
	}
	return &TSocket{conn: conn}, nil
}

func (p *TServerSocket) Listen() error {
	if p.IsListening() {
		return nil
	}
	l, err := netListen(p.addr.Network(), p.addr.String())
	p.listener = l
	return err
}

func (p *TServerSocket) IsListening() bool { return p.listener != nil }

func (p *TServerSocket) Close() error {
	defer func() { p.listener = nil }()
	if p.IsListening() {
		return p.listener.Close()
	}
	return nil
}

func (p *TServerSocket) Interrupt() error {
	p.mu.Lock()
	p.interrupted = true
	p.Close()
	p.mu.Unlock()
	return nil
}

type TSimpleServer struct {
	quit            chan struct{}
	stopOnce        sync.Once
	serverTransport TServerTransport
}

func (p *TSimpleServer) AcceptLoop() error {
	for {
		client, err := p.serverTransport.Accept()
		if err != nil {
			select {
			case <-p.quit:
				return nil
			default:
			}
			return err
		}
		if client != nil {
			go client.Close() // go p.processRequests(client)
		}
	}
}

func (p *TSimpleServer) Serve() error {
	if err := p.serverTransport.Listen(); err != nil {
		return err
	}
	return p.AcceptLoop()
}

func (p *TSimpleServer) Stop() error {
	p.stopOnce.Do(func() {
		p.quit <- struct{}{}
		p.serverTransport.Interrupt()
	})
	return nil
}

func main() {
	server := &TSimpleServer{quit: make(chan struct{}, 1), serverTransport: &TServerSocket{addr: &net.TCPAddr{Port: 9090}}}
	done := make(chan error)
	go func() { done <- server.Serve() }()
	time.Sleep(20 * time.Millisecond) // no client ever connects
	server.Stop()
	fmt.Println("server stopped:", <-done)
}
