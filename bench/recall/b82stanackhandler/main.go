// Project: nats-io/stan.go (go-nats-streaming, the NATS Streaming client; stan.go: conn.Close, conn.cleanupOnClose, conn.publishAsync), around v0.4/v0.5, 2018-2019 (approximate).
// Bug: conn.Close takes sc.Lock and, through cleanupOnClose, fails every pending async publish by calling the user's AckHandler in place, still holding sc.Lock; an AckHandler that uses the connection again (here it retries with PublishAsync) blocks on sc.Lock forever. The fix collects the pending acks and invokes the handlers from a separate goroutine ("We can't do it in place in case user's ackHandler uses the connection").
package main

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

var ErrConnectionClosed = errors.New("stan: connection closed")

// AckHandler is used for Async Publishing to provide status of the ack.
type AckHandler func(string, error)

// natsConn stands in for *nats.Conn.
type natsConn struct {
	mu     sync.Mutex
	closed bool
	out    [][]byte
}

func (nc *natsConn) Publish(subj string, data []byte) error {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	if nc.closed {
		return errors.New("nats: connection closed")
	}
	nc.out = append(nc.out, data)
	return nil
}

func (nc *natsConn) Close() {
	nc.mu.Lock()
	nc.closed = true
	nc.mu.Unlock()
}

type ack struct {
	t  *time.Timer
	ah AckHandler
	ch chan error
}

type Options struct {
	AckTimeout         time.Duration
	MaxPubAcksInflight int
}

type conn struct {
	sync.RWMutex
	clientID   string
	pubPrefix  string
	nc         *natsConn
	ncOwned    bool
	closed     bool
	pubAckMap  map[string]*ack
	pubAckChan chan struct{}
	opts       Options
	pingMu     sync.Mutex
	pingTimer  *time.Timer
	guid       int
}

func Connect(clientID string, opts Options) *conn {
	return &conn{
		clientID:   clientID,
		pubPrefix:  "_STAN.pub.cluster",
		nc:         &natsConn{},
		ncOwned:    true,
		pubAckMap:  make(map[string]*ack),
		pubAckChan: make(chan struct{}, opts.MaxPubAcksInflight),
		opts:       opts,
	}
}

// NatsConn returns the underlying NATS conn.
func (sc *conn) NatsConn() *natsConn {
	sc.RLock()
	defer sc.RUnlock()
	return sc.nc
}

func (sc *conn) PublishAsync(subject string, data []byte, ah AckHandler) (string, error) {
	return sc.publishAsync(subject, data, ah, nil)
}

func (sc *conn) publishAsync(subject string, data []byte, ah AckHandler, ch chan error) (string, error) {
	a := &ack{ah: ah, ch: ch}
	sc.Lock()
	if sc.closed {
		sc.Unlock()
		return "", ErrConnectionClosed
	}
	sc.guid++
	guid := "guid-" + strconv.Itoa(sc.guid)
	subj := sc.pubPrefix + "." + subject
	sc.pubAckMap[guid] = a
	nc := sc.nc
	a.t = time.AfterFunc(sc.opts.AckTimeout, func() {
		if pa := sc.removeAck(guid); pa != nil && pa.ah != nil {
			pa.ah(guid, errors.New("stan: publish ack timeout"))
		}
	})
	sc.Unlock()

	if err := nc.Publish(subj, data); err != nil {
		sc.removeAck(guid)
		return "", err
	}
	return guid, nil
}

func (sc *conn) removeAck(guid string) *ack {
	sc.Lock()
	a := sc.pubAckMap[guid]
	if a != nil {
		delete(sc.pubAckMap, guid)
	}
	sc.Unlock()
	if a != nil && a.t != nil {
		a.t.Stop()
	}
	return a
}

// cleanupOnClose is called with sc's lock held.
func (sc *conn) cleanupOnClose(err error) {
	sc.pingMu.Lock()
	if sc.pingTimer != nil {
		sc.pingTimer.Stop()
		sc.pingTimer = nil
	}
	sc.pingMu.Unlock()

	// Fail all pending pubs
	for guid, pubAck := range sc.pubAckMap {
		delete(sc.pubAckMap, guid)
		if pubAck.t != nil {
			pubAck.t.Stop()
		}
		if pubAck.ah != nil {
			pubAck.ah(guid, err)
		} else if pubAck.ch != nil {
			pubAck.ch <- err
		}
	}
}

// Close a connection to the stan system.
func (sc *conn) Close() error {
	sc.Lock()
	defer sc.Unlock()
	if sc.closed {
		return nil
	}
	sc.closed = true
	sc.cleanupOnClose(ErrConnectionClosed)
	if sc.ncOwned {
		sc.nc.Close()
	}
	return nil
}

func main() {
	sc := Connect("client-1", Options{AckTimeout: 30 * time.Second, MaxPubAcksInflight: 16})
	done := make(chan string, 1)

	var ah AckHandler
	ah = func(guid string, err error) {
		if err != nil {
			// Application retries failed publishes on the same connection.
			_, rerr := sc.PublishAsync("orders", []byte("order-1"), ah)
			done <- fmt.Sprintf("ack %s failed (%v), retry: %v", guid, err, rerr)
		}
	}
	if _, err := sc.PublishAsync("orders", []byte("order-1"), ah); err != nil {
		panic(err)
	}
	// The streaming server never acks; the application shuts down.
	sc.Close()
	fmt.Println(<-done)
}
