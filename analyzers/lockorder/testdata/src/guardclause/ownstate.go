package guardclause

import (
	"errors"
	"sync"
)

var errNotConnected = errors.New("not connected")

// A callee that locks where a call on the caller's locked object fails:
// the caller may have made sure it does not (it connected under the lock
// first), so the failure is state it rules out. Silent (sarama's Broker:
// Produce connects, then send, which records the error under the lock
// only when not connected).
type Broker struct {
	lock    sync.Mutex
	conn    *int
	lastErr error
}

func (b *Broker) current() (*int, error) {
	if b.conn != nil {
		return b.conn, nil
	}
	return nil, errNotConnected
}

func (b *Broker) send() error {
	c, err := b.current()
	if err != nil {
		b.lock.Lock()
		b.lastErr = err
		b.lock.Unlock()
		return err
	}
	*c++
	return nil
}

func (b *Broker) connectLocked() {
	if b.conn == nil {
		b.conn = new(int)
	}
}

func (b *Broker) Produce() error {
	b.lock.Lock()
	defer b.lock.Unlock()
	b.connectLocked()
	return b.send()
}
