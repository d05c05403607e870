// Modelled on sarama's Broker: send records "not connected" under b.lock on
// its error path. Produce holds b.lock, connects first, and only then calls
// send, so send's error path is unreachable while the lock is held.
package main

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

var (
	ErrNotConnected = errors.New("kafka: broker not connected")
	errDial         = errors.New("kafka: dial tcp: connection refused")
)

type brokerConn struct{ frames atomic.Int64 }

func (c *brokerConn) write(req string) { c.frames.Add(1) }

type Broker struct {
	lock     sync.Mutex
	conn     atomic.Pointer[brokerConn] // stored/cleared only while holding lock
	connErr  error                      // guarded by lock
	requests int                        // guarded by lock
	dials    atomic.Int64
}

func (b *Broker) currentConn() (*brokerConn, error) {
	if c := b.conn.Load(); c != nil {
		return c, nil
	}
	return nil, ErrNotConnected
}

// send takes b.lock only when there is no connection.
func (b *Broker) send(req string) error {
	conn, err := b.currentConn()
	if err != nil {
		b.lock.Lock()
		b.connErr = err
		b.lock.Unlock()
		return err
	}
	conn.write(req)
	return nil
}

// connectLocked dials if needed (an in-memory dial that fails every 5th try).
func (b *Broker) connectLocked() error {
	if b.conn.Load() != nil {
		return nil
	}
	if b.dials.Add(1)%5 == 0 {
		return errDial
	}
	b.conn.Store(&brokerConn{})
	return nil
}

// Produce holds b.lock. After connectLocked succeeds b.conn is non-nil and
// cannot be cleared (Close needs b.lock), so send never takes the lock here.
func (b *Broker) Produce(req string) error {
	b.lock.Lock()
	defer b.lock.Unlock()
	if err := b.connectLocked(); err != nil {
		b.connErr = err
		return err
	}
	b.requests++
	return b.send(req)
}

// SendAsync is the unlocked path: it may observe a closed broker.
func (b *Broker) SendAsync(req string) error { return b.send(req) }

func (b *Broker) Close() {
	b.lock.Lock()
	b.conn.Store(nil)
	b.lock.Unlock()
}

func main() {
	b := &Broker{}
	var wg sync.WaitGroup
	var produceErrs, asyncErrs atomic.Int64
	for g := 0; g < 4; g++ {
		wg.Add(2)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if b.Produce(fmt.Sprintf("p%d-%d", g, i)) != nil {
					produceErrs.Add(1)
				}
			}
		}(g)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if b.SendAsync(fmt.Sprintf("a%d-%d", g, i)) != nil {
					asyncErrs.Add(1)
				}
				if i%40 == 0 {
					b.Close() // force reconnects
				}
			}
		}(g)
	}
	wg.Wait()
	b.lock.Lock()
	fmt.Printf("requests=%d produceErrs=%d asyncErrs=%d lastErr=%v\n",
		b.requests, produceErrs.Load(), asyncErrs.Load(), b.connErr)
	b.lock.Unlock()
}
