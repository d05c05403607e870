// Project: quic-go (packet_handler_map.go, server.go)
// Bug: Goroutine A (packetHandlerMap.listen, after ReadFrom fails) runs close(): it holds h.mutex and calls
//      h.server.setCloseError() through the unknownPacketHandler interface, which takes baseServer.mutex.
//      Goroutine B (application calling baseServer.Close) holds s.mutex and calls s.sessionHandler.CloseServer()
//      through the packetHandlerManager interface, which takes h.mutex. AB-BA between the two mutexes.
// Upstream fix: quic-go/quic-go#2849 (fixes #2716) stops nesting the locks in opposite orders: the server is told about the close error after h.mutex is released.

package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type packetHandler interface{ destroy(error) }

type unknownPacketHandler interface{ setCloseError(error) }

type packetHandlerManager interface {
	Add(connID string, h packetHandler)
	CloseServer()
}

type session struct{ connID string }

func (s *session) destroy(e error) { time.Sleep(2 * time.Millisecond) } // send CONNECTION_CLOSE, stop run loop

type packetHandlerMap struct {
	mutex    sync.Mutex
	handlers map[string]packetHandler
	server   unknownPacketHandler
	closed   bool
	readErr  chan error
}

func (h *packetHandlerMap) Add(connID string, handler packetHandler) {
	h.mutex.Lock()
	h.handlers[connID] = handler
	h.mutex.Unlock()
}

func (h *packetHandlerMap) CloseServer() {
	h.mutex.Lock()
	h.server = nil
	h.mutex.Unlock()
}

func (h *packetHandlerMap) listen() {
	err := <-h.readErr // h.conn.ReadFrom failed
	h.close(err)
}

func (h *packetHandlerMap) close(e error) error {
	h.mutex.Lock()
	if h.closed {
		h.mutex.Unlock()
		return nil
	}
	for _, handler := range h.handlers {
		handler.destroy(e)
	}
	if h.server != nil {
		h.server.setCloseError(e)
	}
	h.closed = true
	h.mutex.Unlock()
	return nil
}

type baseServer struct {
	mutex          sync.Mutex
	sessionHandler packetHandlerManager
	closed         bool
	serverError    error
	errorChan      chan struct{}
}

func (s *baseServer) setCloseError(e error) {
	s.mutex.Lock() // DEADLOCK HERE
	defer s.mutex.Unlock()
	if s.closed {
		return
	}
	s.closed, s.serverError = true, e
	close(s.errorChan)
}

func (s *baseServer) Close() error {
	s.mutex.Lock()
	defer s.mutex.Unlock()
	if s.closed {
		return nil
	}
	s.serverError = errors.New("server closed")
	s.sessionHandler.CloseServer()
	s.closed = true
	close(s.errorChan)
	return nil
}

func main() {
	h := &packetHandlerMap{handlers: map[string]packetHandler{}, readErr: make(chan error)}
	s := &baseServer{sessionHandler: h, errorChan: make(chan struct{})}
	h.server = s
	h.Add("c0ffee", &session{connID: "c0ffee"})
	done := make(chan struct{})
	go func() { h.listen(); close(done) }()
	h.readErr <- errors.New("read udp [::]:4433: use of closed network connection")
	time.Sleep(500 * time.Microsecond)
	fmt.Println("server close:", s.Close())
	<-done
	fmt.Println("packet handler map closed")
}
