package tryacquire

import (
	"errors"
	"sync"
)

// A helper that locks a device only when it knows it, and says so
// (kubeedge's DTContext.Lock(id)): it read-locks the context and locks
// the device's own mutex, both only on `return true`. It is a TryLock of
// the context's lock, with the device's mutex taken along: no
// inconsistent return. A caller that ignores its result takes it for a
// plain lock; the returns that forget the Unlock leak the context lock,
// one finding for all of them.
type Devices struct {
	mu      *sync.RWMutex
	mutexes sync.Map
	state   map[string]string
}

func (d *Devices) getMutex(id string) (*sync.Mutex, bool) {
	v, _ := d.mutexes.Load(id)
	m, ok := v.(*sync.Mutex)
	return m, ok
}

func (d *Devices) Lock(id string) bool {
	m, ok := d.getMutex(id)
	if ok {
		d.mu.RLock()
		m.Lock()
		return true
	}
	return false
}

func (d *Devices) Unlock(id string) bool {
	m, ok := d.getMutex(id)
	if ok {
		m.Unlock()
		d.mu.RUnlock()
		return true
	}
	return false
}

func (d *Devices) notify(id string) error {
	if id == "" {
		return errors.New("no device")
	}
	return nil
}

func (d *Devices) SetState(id, state string) (string, error) {
	d.Lock(id)
	old, ok := d.state[id]
	if !ok {
		return "", nil // want `Devices.mu taken at discarded.go:\d+ is still held on this return path and 2 more \(other paths release it\)`
	}
	if state == old {
		return old, nil
	}
	if state != "online" && state != "offline" {
		return old, nil
	}
	d.state[id] = state
	d.Unlock(id)
	return old, d.notify(id)
}

// The fix: the unlock deferred. And a caller that tests the result
// holds the locks only where it said true.
func (d *Devices) SetStateFixed(id, state string) (string, error) {
	d.Lock(id)
	defer d.Unlock(id)
	old, ok := d.state[id]
	if !ok {
		return "", nil
	}
	d.state[id] = state
	return old, d.notify(id)
}

func (d *Devices) Touch(id string) {
	if !d.Lock(id) {
		return
	}
	d.state[id] += "."
	d.Unlock(id)
}

// Not TryLocks: a helper that lets go of its caller's lock around a
// write and takes it back before it reports true, called as a statement
// with the lock held; and a constructor that keeps its lock on success
// and returns a new error, a failure, after letting it go.
type Client struct {
	mu       sync.Mutex
	out      [][]byte
	flushing bool
}

func (c *Client) flush() bool {
	if c.flushing || len(c.out) == 0 {
		return false
	}
	c.flushing = true
	bufs := c.out
	c.out = nil
	c.mu.Unlock()
	_ = bufs
	c.mu.Lock()
	c.flushing = false
	return true
}

func (c *Client) queue(msg []byte) {
	c.out = append(c.out, msg)
	if len(c.out) > 8 {
		c.flush()
	}
}

type devTx struct{ d *Devices }

func (d *Devices) Begin(closed bool) (*devTx, error) {
	d.mu.Lock()
	if closed {
		d.mu.Unlock()
		return nil, errors.New("closed")
	}
	return &devTx{d: d}, nil
}
