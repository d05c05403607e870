// Project: quic-go/quic-go v0.41 (transport.go: Transport.close, Transport.closeServer; server.go: baseServer.close)
// Issue: quic-go/quic-go#4266 "deadlock when closing transport and/or server"
// Fixed twin: Transport.close takes t.mutex (line 88) only to mark the transport closed and
// detach the server, and closes the server (line 101) after releasing it, so the server's
// onClose callback (Transport.closeServer, line 76) never waits for a goroutine that holds
// t.mutex while it wants the server's mutex (line 42).
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type packetHandlerMap struct{ closed bool }

func (h *packetHandlerMap) Close(error) { h.closed = true }

type baseServer struct {
	mutex     sync.Mutex
	closed    bool
	closeErr  error
	closeChan chan struct{}
	running   chan struct{} // closed as soon as run() returns
	onClose   func()
}

func (s *baseServer) run() {
	defer close(s.running)
	<-s.closeChan
	time.Sleep(50 * time.Millisecond) // drain the queued connections
}

// Close is Listener.Close.
func (s *baseServer) Close() error {
	s.close(errors.New("server closed"), true)
	return nil
}

func (s *baseServer) close(e error, notifyOnClose bool) {
	s.mutex.Lock()
	defer s.mutex.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	s.closeErr = e
	close(s.closeChan)
	<-s.running
	if notifyOnClose {
		s.onClose()
	}
}

// Transport is quic.Transport.
type Transport struct {
	mutex       sync.Mutex
	closed      bool
	server      *baseServer
	handlerMap  *packetHandlerMap
	createdConn bool
}

// Listen starts a server on the transport.
func (t *Transport) Listen() *baseServer {
	t.mutex.Lock()
	defer t.mutex.Unlock()
	s := &baseServer{closeChan: make(chan struct{}), running: make(chan struct{}), onClose: t.closeServer}
	go s.run()
	t.server = s
	return s
}

func (t *Transport) closeServer() {
	t.mutex.Lock()
	t.server = nil
	t.mutex.Unlock()
}

// Close closes the underlying connection, all connections and the server.
func (t *Transport) Close() error {
	t.close(errors.New("closing"))
	return nil
}

func (t *Transport) close(e error) {
	t.mutex.Lock()
	if t.closed {
		t.mutex.Unlock()
		return
	}
	if t.handlerMap != nil {
		t.handlerMap.Close(e)
	}
	server := t.server
	t.closed = true
	t.mutex.Unlock()

	if server != nil {
		server.close(e, false)
	}
}

func main() {
	tr := &Transport{handlerMap: &packetHandlerMap{}}
	ln := tr.Listen()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		ln.Close()
	}()
	time.Sleep(10 * time.Millisecond)
	go func() {
		defer wg.Done()
		tr.Close()
	}()
	wg.Wait()
	fmt.Println("listener and transport closed")
}
