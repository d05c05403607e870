// Package memberlist is a gossip layer modeled on hashicorp/memberlist.
package memberlist

import "sync"

// Delegate is implemented by the layer above (serf) to receive user messages
// and provide local state for push/pull syncs.
type Delegate interface {
	NotifyMsg(msg []byte)
	LocalState() []byte
}

// Memberlist gossips messages.
type Memberlist struct {
	mu       sync.Mutex
	delegate Delegate
	queue    [][]byte
	received int
}

// Create returns a memberlist using d.
func Create(d Delegate) *Memberlist { return &Memberlist{delegate: d} }

// Deliver hands an incoming message to the delegate while holding m.mu.
func (m *Memberlist) Deliver(msg []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.received++
	m.delegate.NotifyMsg(msg)
}

// PushPull returns the delegate's state while holding m.mu.
func (m *Memberlist) PushPull() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.delegate.LocalState()
}

// Broadcast queues msg for gossip.
func (m *Memberlist) Broadcast(msg []byte) {
	m.mu.Lock()
	m.queue = append(m.queue, msg)
	m.mu.Unlock()
}
