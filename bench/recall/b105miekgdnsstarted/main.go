// Project: miekg/dns (server.go: Server.ListenAndServe, Server.ActivateAndServe, Server.Shutdown), graceful shutdown code of late 2014.
// Bug: ListenAndServe and ActivateAndServe take srv.lock and, when the server is already started, return "server already started" without unlocking it (Shutdown has the same early return for "server not started"), so after one redundant start the lock stays held and the next Shutdown (or a third start) blocks forever on srv.lock (issue #161 "Maybe dead lock in Server.ListenAndServe", fixed by unlocking on the early-return paths).
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type Error struct{ err string }

func (e *Error) Error() string { return "dns: " + e.err }

type Msg struct{ Id uint16 }

type ResponseWriter interface{ WriteMsg(*Msg) error }

type Handler interface {
	ServeDNS(w ResponseWriter, r *Msg)
}

type HandlerFunc func(ResponseWriter, *Msg)

func (f HandlerFunc) ServeDNS(w ResponseWriter, r *Msg) { f(w, r) }

// packetConn is a stand-in for the *net.UDPConn the server reads from.
type packetConn struct {
	in     chan []byte
	closed chan struct{}
	once   sync.Once
}

func (c *packetConn) ReadFrom(b []byte) (int, string, error) {
	select {
	case p := <-c.in:
		return copy(b, p), "127.0.0.1:5353", nil
	case <-c.closed:
		return 0, "", errors.New("use of closed network connection")
	}
}

func (c *packetConn) Close() error { c.once.Do(func() { close(c.closed) }); return nil }

// exchange stands for the Client.Exchange query Shutdown sends to itself.
func exchange(c *packetConn, q []byte) {
	time.Sleep(time.Millisecond) // network round trip
	select {
	case c.in <- q:
	case <-c.closed:
	}
}

type Server struct {
	Addr        string
	Net         string
	PacketConn  *packetConn
	Handler     Handler
	ReadTimeout time.Duration

	// For graceful shutdown.
	stopUDP chan bool
	wgUDP   sync.WaitGroup

	// make start/shutdown not racy
	lock    sync.Mutex
	started bool
}

func (srv *Server) getReadTimeout() time.Duration {
	if srv.ReadTimeout != 0 {
		return srv.ReadTimeout
	}
	return 2 * time.Second
}

// ActivateAndServe starts a nameserver with the PacketConn or Listener
// configured in *Server.
func (srv *Server) ActivateAndServe() error {
	srv.lock.Lock()
	if srv.started {
		return &Error{err: "server already started"}
	}
	srv.stopUDP = make(chan bool)
	srv.started = true
	srv.lock.Unlock()
	if srv.PacketConn != nil {
		return srv.serveUDP(srv.PacketConn)
	}
	return &Error{err: "bad listeners"}
}

// Shutdown gracefully shuts down a server.
func (srv *Server) Shutdown() error {
	srv.lock.Lock()
	if !srv.started {
		return &Error{err: "server not started"}
	}
	srv.started = false
	srv.lock.Unlock()

	fin := make(chan bool)
	go func() {
		srv.stopUDP <- true
		srv.wgUDP.Wait()
		fin <- true
	}()
	go exchange(srv.PacketConn, []byte{0, 0}) // extra query to help the ReadXXX loop to pass
	select {
	case <-time.After(srv.getReadTimeout()):
		return &Error{err: "server shutdown is pending"}
	case <-fin:
		return nil
	}
}

func (srv *Server) serveUDP(l *packetConn) error {
	defer l.Close()
	handler := srv.Handler
	for {
		m, e := srv.readUDP(l)
		select {
		case <-srv.stopUDP:
			return nil
		default:
		}
		if e != nil {
			continue
		}
		srv.wgUDP.Add(1)
		go srv.serve(handler, m)
	}
}

func (srv *Server) readUDP(conn *packetConn) ([]byte, error) {
	m := make([]byte, 512)
	n, _, e := conn.ReadFrom(m)
	if e != nil || n == 0 {
		return nil, e
	}
	return m[:n], nil
}

type response struct{}

func (response) WriteMsg(*Msg) error { return nil }

func (srv *Server) serve(h Handler, m []byte) {
	defer srv.wgUDP.Done()
	h.ServeDNS(response{}, &Msg{Id: uint16(m[0])<<8 | uint16(m[1])})
}

func main() {
	srv := &Server{Net: "udp", PacketConn: &packetConn{in: make(chan []byte), closed: make(chan struct{})},
		Handler: HandlerFunc(func(w ResponseWriter, r *Msg) { w.WriteMsg(r) })}
	go func() { fmt.Println("serve:", srv.ActivateAndServe()) }()
	time.Sleep(50 * time.Millisecond)

	// The embedding program's supervisor starts the server once more.
	fmt.Println("second start:", srv.ActivateAndServe())

	fmt.Println("shutdown:", srv.Shutdown())
}
