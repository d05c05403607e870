// Project: github.com/lib/pq
// Bug: ListenerConn.Close took connectionLock and then senderLock (to send a Terminate
// message), while ExecSimpleQuery holds senderLock and takes connectionLock when the
// send fails; a Close racing with a failing LISTEN deadlocks (AB-BA).
// Fix: Close no longer touches senderLock: it records the error under connectionLock,
// releases it and simply closes the net.Conn to wake everybody up.

package b20libpqlistener

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

var errListenerConnClosed = errors.New("pq: ListenerConn has been closed")

// netConn is the socket under the protocol connection.
type netConn struct {
	mu      sync.Mutex
	closed  bool
	written [][]byte
	stall   func() error // one-shot hook: a slow write to a dying peer
}

func (c *netConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	stall := c.stall
	c.stall = nil
	c.mu.Unlock()
	if stall != nil {
		if err := stall(); err != nil {
			return 0, err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, errors.New("write: use of closed network connection")
	}
	c.written = append(c.written, append([]byte(nil), p...))
	return len(p), nil
}

func (c *netConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return nil
}

type conn struct {
	c         *netConn
	processID int
	secretKey int
}

type message struct {
	typ byte
	err error
}

type Notification struct {
	BePid   int
	Channel string
	Extra   string
}

type ListenerConn struct {
	// guards cn and err
	connectionLock sync.Mutex
	cn             *conn
	err            error

	notificationChan chan<- *Notification

	// guards only sending
	senderLock sync.Mutex
	replyChan  chan message
}

func newListenerConn(c *netConn, notificationChan chan<- *Notification) *ListenerConn {
	return &ListenerConn{
		cn:               &conn{c: c, processID: 4242},
		notificationChan: notificationChan,
		replyChan:        make(chan message, 2),
	}
}

// acquireSenderLock: we must acquire senderLock first to avoid deadlocks;
// see ExecSimpleQuery.
func (l *ListenerConn) acquireSenderLock() error {
	l.senderLock.Lock()

	l.connectionLock.Lock()
	err := l.err
	l.connectionLock.Unlock()
	if err != nil {
		l.senderLock.Unlock()
		return err
	}
	return nil
}

func (l *ListenerConn) releaseSenderLock() {
	l.senderLock.Unlock()
}

func (l *ListenerConn) sendSimpleQuery(q string) error {
	buf := append([]byte{'Q'}, q...)
	buf = append(buf, 0)
	_, err := l.cn.c.Write(buf)
	return err
}

// ExecSimpleQuery executes a "simple query" (no parameters) on the connection.
func (l *ListenerConn) ExecSimpleQuery(q string) (executed bool, err error) {
	if err = l.acquireSenderLock(); err != nil {
		return false, err
	}
	defer l.releaseSenderLock()

	err = l.sendSimpleQuery(q)
	if err != nil {
		// We can't know what state the protocol is in, so we need to
		// abandon this connection.
		l.connectionLock.Lock()
		if l.err == nil {
			l.err = err
		}
		l.connectionLock.Unlock()
		l.cn.c.Close()
		return false, err
	}
	m, ok := <-l.replyChan
	if !ok {
		l.connectionLock.Lock()
		err := l.err
		l.connectionLock.Unlock()
		return false, err
	}
	return true, m.err
}

func (l *ListenerConn) Listen(channel string) (bool, error) {
	return l.ExecSimpleQuery("LISTEN " + quoteIdentifier(channel))
}

func (l *ListenerConn) Unlisten(channel string) (bool, error) {
	return l.ExecSimpleQuery("UNLISTEN " + quoteIdentifier(channel))
}

// Close closes the connection.
func (l *ListenerConn) Close() error {
	l.connectionLock.Lock()
	defer l.connectionLock.Unlock()
	if l.err != nil {
		return errListenerConnClosed
	}
	l.err = errListenerConnClosed

	// Politely tell the server we are going away.
	l.senderLock.Lock()
	_, _ = l.cn.c.Write([]byte{'X', 0, 0, 0, 4})
	l.senderLock.Unlock()
	return l.cn.c.Close()
}

func quoteIdentifier(name string) string {
	return fmt.Sprintf("%q", name)
}

func TestListenerConnCloseDuringListen(t *testing.T) {
	inWrite, writeFail := make(chan struct{}), make(chan error)
	nc := &netConn{stall: func() error {
		close(inWrite)
		return <-writeFail
	}}
	l := newListenerConn(nc, make(chan *Notification, 8))

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, _ = l.Listen("jobs")
	}()
	<-inWrite // the LISTEN holds senderLock and is writing
	go func() {
		defer wg.Done()
		_ = l.Close()
	}()
	time.Sleep(100 * time.Millisecond) // Close holds connectionLock, waits for senderLock
	writeFail <- errors.New("write: connection reset by peer")
	wg.Wait()
}
