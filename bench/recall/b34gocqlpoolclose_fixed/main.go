// Project: gocql, the Cassandra driver for Go (connectionpool.go, conn.go, session.go), late 2017
// Issue: gocql/gocql#1031 "Session's Close() method hangs", fixed by PR #1047 "connectionpool: fix deadlock on locked drain"
// Fixed twin of b34gocqlpoolclose, with the fix of PR #1047: hostConnPool.Close marks the pool closed and takes
// the connections out of it under pool.mu, then unlocks before closing them, so HandleError (called back by a
// connection whose Close failed) can take pool.mu and return early on the closed pool.
package main

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// ConnErrorHandler is notified of connection errors.
type ConnErrorHandler interface {
	HandleError(conn *Conn, err error, closed bool)
}

// tlsConn stands in for the *tls.Conn the driver dials when SslOpts are set.
type tlsConn struct {
	handshakeComplete bool
	closed            bool
}

func (c *tlsConn) Close() error {
	c.closed = true
	if !c.handshakeComplete {
		return nil
	}
	// the peer has already gone away: writing the alert fails
	return errors.New("tls: failed to send closeNotify alert (but connection was closed anyway): write tcp 10.0.0.5:53244->10.0.0.9:9042: write: broken pipe")
}

type callReq struct {
	resp chan error
}

// Conn is a single connection to a Cassandra node.
type Conn struct {
	conn         *tlsConn
	addr         string
	errorHandler ConnErrorHandler

	mu    sync.Mutex
	calls map[int]*callReq

	quit   chan struct{}
	closed int32
}

func (c *Conn) Close() {
	c.closeWithError(nil)
}

func (c *Conn) closeWithError(err error) {
	if !atomic.CompareAndSwapInt32(&c.closed, 0, 1) {
		return
	}

	// we should attempt to deliver the error back to the caller if it
	// exists
	if err != nil {
		c.mu.Lock()
		for id, req := range c.calls {
			// we need to send the error to all waiting queries, put the state
			// of this conn into not active so that it can not execute any queries.
			select {
			case req.resp <- err:
			default:
			}
			delete(c.calls, id)
		}
		c.mu.Unlock()
	}

	// if error was nil then unblock the quit channel
	close(c.quit)
	cerr := c.close()

	if err != nil {
		c.errorHandler.HandleError(c, err, true)
	} else if cerr != nil {
		// TODO(zariel): is it a good idea to do this?
		c.errorHandler.HandleError(c, cerr, true)
	}
}

func (c *Conn) close() error {
	return c.conn.Close()
}

// serve is the connection's frame reader.
func (c *Conn) serve() {
	<-c.quit
}

// hostConnPool is a connection pool for a single host.
type hostConnPool struct {
	host     string
	size     int
	keyspace string
	// protection for conns, closed, filling
	mu      sync.RWMutex
	conns   []*Conn
	closed  bool
	filling bool
	pos     uint32
}

func newHostConnPool(host string, size int, keyspace string) *hostConnPool {
	pool := &hostConnPool{host: host, size: size, keyspace: keyspace}
	pool.fill()
	return pool
}

// fill the connection pool
func (pool *hostConnPool) fill() {
	pool.mu.Lock()
	if pool.closed || pool.filling || len(pool.conns) >= pool.size {
		pool.mu.Unlock()
		return
	}
	pool.filling = true
	n := pool.size - len(pool.conns)
	pool.mu.Unlock()

	for i := 0; i < n; i++ {
		conn := &Conn{conn: &tlsConn{handshakeComplete: true}, addr: pool.host, errorHandler: pool,
			calls: make(map[int]*callReq), quit: make(chan struct{})}
		go conn.serve()
		pool.mu.Lock()
		pool.conns = append(pool.conns, conn)
		pool.mu.Unlock()
	}

	pool.mu.Lock()
	pool.filling = false
	pool.mu.Unlock()
}

// Close the connection pool
func (pool *hostConnPool) Close() {
	pool.mu.Lock()

	if pool.closed {
		pool.mu.Unlock()
		return
	}
	pool.closed = true

	// ensure we dont try to reacquire the lock in handleError
	// TODO: improve this as the following can happen
	// 1) we have locked pool.mu write lock
	// 2) conn.Close calls conn.closeWithError(nil)
	// 3) conn.closeWithError calls conn.Close() which returns an error
	// 4) conn.closeWithError calls pool.HandleError with the error from conn.Close
	// 5) pool.HandleError tries to lock pool.mu
	// deadlock

	// empty the pool
	conns := pool.conns
	pool.conns = nil

	pool.mu.Unlock()

	// close the connections
	for _, conn := range conns {
		conn.Close()
	}
}

// HandleError handles errors from the connection
func (pool *hostConnPool) HandleError(conn *Conn, err error, closed bool) {
	if !closed {
		// still an open connection, so continue using it
		return
	}

	// TODO: track the number of errors per host and detect when a host is dead,
	// then also have something which can detect when a host comes back.
	pool.mu.Lock()
	defer pool.mu.Unlock()

	if pool.closed {
		// pool closed
		return
	}

	// find the connection index
	for i, candidate := range pool.conns {
		if candidate == conn {
			// remove the connection, not preserving order
			pool.conns[i], pool.conns = pool.conns[len(pool.conns)-1], pool.conns[:len(pool.conns)-1]

			// lost a connection, so fill the pool
			go pool.fill()
			break
		}
	}
}

type Session struct {
	pools    map[string]*hostConnPool
	isClosed bool
	mu       sync.Mutex
}

// Close closes all connections. The session is unusable after this
// operation.
func (s *Session) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.isClosed {
		return
	}
	s.isClosed = true
	for _, pool := range s.pools {
		pool.Close()
	}
}

func main() {
	sess := &Session{pools: map[string]*hostConnPool{
		"10.0.0.9:9042": newHostConnPool("10.0.0.9:9042", 1, "metrics"),
	}}
	fmt.Println("About to close...")
	sess.Close()
	fmt.Println("Closed")
}
