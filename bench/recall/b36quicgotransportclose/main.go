// Project: quic-go/quic-go v0.41 (transport.go: Transport.close, Transport.closeServer; server.go: baseServer.close)
// Issue: quic-go/quic-go#4266 "deadlock when closing transport and/or server"
// Closing a Listener and its Transport at the same time takes the two mutexes in opposite
// orders. Listener.Close -> baseServer.close locks the server's mutex (line 46), stops the run
// loop and then notifies the transport through the onClose callback, Transport.closeServer,
// which locks t.mutex (line 80). Transport.Close -> Transport.close locks t.mutex (line 92) and,
// still holding it, closes the server it owns through baseServer.close, which locks the
// server's mutex (line 101). Each goroutine holds the lock the other wants; the application's
// shutdown hangs in both Close calls.
// main() closes the listener and, 10ms later, the transport from a second goroutine.
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
	defer t.mutex.Unlock()
	if t.closed {
		return
	}
	if t.handlerMap != nil {
		t.handlerMap.Close(e)
	}
	if t.server != nil {
		t.server.close(e, false)
	}
	t.closed = true
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
