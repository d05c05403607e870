// Project: traefik/traefik (pkg/server/server_entrypoint_tcp.go: connectionTracker, trackedConnection, TCPEntryPoint), v2.0 alpha, 2019.
// Bug: connectionTracker.Shutdown polls the tracked connections under c.lock.RLock() and, when none are left, returns
// nil without releasing the read lock. Every later AddConnection or RemoveConnection (a connection accepted or closed
// after the entrypoint's graceful shutdown started) blocks forever on c.lock.Lock(), and with it the entrypoint's accept
// loop. Fixed (approximately traefik/traefik#4600, "Fix lock problem in server") by moving the check into an isEmpty()
// helper that releases the read lock before returning.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// WriteCloser is a net.Conn that can also close its write side.
type WriteCloser interface {
	Write(p []byte) (int, error)
	Close() error
}

type Handler interface{ ServeTCP(conn WriteCloser) }

type HandlerFunc func(conn WriteCloser)

func (f HandlerFunc) ServeTCP(conn WriteCloser) { f(conn) }

// HandlerSwitcher lets the router be swapped on configuration reload.
type HandlerSwitcher struct {
	mu     sync.RWMutex
	router Handler
}

func (s *HandlerSwitcher) ServeTCP(conn WriteCloser) {
	s.mu.RLock()
	handler := s.router
	s.mu.RUnlock()
	handler.ServeTCP(conn)
}

func (s *HandlerSwitcher) Switch(handler Handler) {
	s.mu.Lock()
	s.router = handler
	s.mu.Unlock()
}

type fakeConn struct{ addr string }

func (c *fakeConn) Write(p []byte) (int, error) { return len(p), nil }
func (c *fakeConn) Close() error                { return nil }

type listener struct{ conns chan *fakeConn }

var errClosed = errors.New("use of closed network connection")

func (l *listener) Accept() (WriteCloser, error) {
	if c, ok := <-l.conns; ok {
		return c, nil
	}
	return nil, errClosed
}

func (l *listener) Close() error { close(l.conns); return nil }

type connectionTracker struct {
	conns map[WriteCloser]struct{}
	lock  sync.RWMutex
}

func newConnectionTracker() *connectionTracker {
	return &connectionTracker{conns: make(map[WriteCloser]struct{})}
}

// AddConnection add a connection in the tracked connections list
func (c *connectionTracker) AddConnection(conn WriteCloser) {
	c.lock.Lock()
	defer c.lock.Unlock()
	c.conns[conn] = struct{}{}
}

// RemoveConnection remove a connection from the tracked connections list
func (c *connectionTracker) RemoveConnection(conn WriteCloser) {
	c.lock.Lock()
	defer c.lock.Unlock()
	delete(c.conns, conn)
}

// Shutdown wait for the connection closing
func (c *connectionTracker) Shutdown(ctx context.Context) error {
	ticker := time.NewTicker(10 * time.Millisecond)
	defer ticker.Stop()
	for {
		if c.isEmpty() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
		}
	}
}

func (c *connectionTracker) isEmpty() bool {
	c.lock.RLock()
	defer c.lock.RUnlock()
	return len(c.conns) == 0
}

// Close close all the connections in the tracked connections list
func (c *connectionTracker) Close() {
	c.lock.Lock()
	defer c.lock.Unlock()
	for conn := range c.conns {
		_ = conn.Close()
		delete(c.conns, conn)
	}
}

type trackedConnection struct {
	tracker *connectionTracker
	WriteCloser
}

func newTrackedConnection(conn WriteCloser, tracker *connectionTracker) *trackedConnection {
	tracker.AddConnection(conn)
	return &trackedConnection{WriteCloser: conn, tracker: tracker}
}

func (t *trackedConnection) Close() error {
	t.tracker.RemoveConnection(t.WriteCloser)
	return t.WriteCloser.Close()
}

type TCPEntryPoint struct {
	name         string
	listener     *listener
	switcher     *HandlerSwitcher
	tracker      *connectionTracker
	graceTimeOut time.Duration
	served       int
}

func (e *TCPEntryPoint) startTCP(done chan<- struct{}) {
	defer close(done)
	for conn, err := e.listener.Accept(); err == nil; conn, err = e.listener.Accept() {
		e.served++
		e.switcher.ServeTCP(newTrackedConnection(conn, e.tracker))
	}
}

// Shutdown stops the TCP connections
func (e *TCPEntryPoint) Shutdown(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, e.graceTimeOut)
	defer cancel()
	var wg sync.WaitGroup
	if e.tracker != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := e.tracker.Shutdown(ctx); err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				fmt.Println("Wait hijack connection is overdue to:", err)
				e.tracker.Close()
			}
		}()
	}
	wg.Wait() // the HTTP and HTTPS forwarders are shut down in parallel in the real code
}

func main() {
	ep := &TCPEntryPoint{
		name:         "web",
		listener:     &listener{conns: make(chan *fakeConn, 4)},
		switcher:     &HandlerSwitcher{},
		tracker:      newConnectionTracker(),
		graceTimeOut: time.Second,
	}
	// The TCP router proxies the connection and closes it when the backend is done.
	ep.switcher.Switch(HandlerFunc(func(conn WriteCloser) {
		_, _ = conn.Write([]byte("HTTP/1.1 200 OK\r\n\r\n"))
		_ = conn.Close()
	}))
	done := make(chan struct{})
	go ep.startTCP(done)

	ep.listener.conns <- &fakeConn{addr: "10.0.0.1:40000"}
	time.Sleep(20 * time.Millisecond) // served and closed

	// SIGTERM: graceful shutdown of the entrypoint; no connection is in flight.
	ep.Shutdown(context.Background())

	// A client connected just before the listener went away.
	ep.listener.conns <- &fakeConn{addr: "10.0.0.2:40001"}
	_ = ep.listener.Close()
	<-done
	fmt.Println("entrypoint", ep.name, "stopped after", ep.served, "connections")
}
