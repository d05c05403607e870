// Package session is a tiny stream multiplexer modeled on hashicorp/yamux.
package session

import "sync"

// Owner is notified when a stream managed by the session goes away.
type Owner interface {
	StreamClosed(id uint32)
}

// Session tracks the open streams of one connection.
type Session struct {
	mu      sync.Mutex
	nextID  uint32
	streams map[uint32]bool
	owner   Owner
}

// New returns a session reporting to owner.
func New(owner Owner) *Session {
	return &Session{nextID: 1, streams: make(map[uint32]bool), owner: owner}
}

// Open allocates a new stream id.
func (s *Session) Open() uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextID
	s.nextID += 2
	s.streams[id] = true
	return id
}

// Close removes the stream and then notifies the owner. As in yamux's
// closeStream, the session lock is released before the owner is called.
func (s *Session) Close(id uint32) {
	s.mu.Lock()
	_, ok := s.streams[id]
	delete(s.streams, id)
	s.mu.Unlock()
	if ok {
		s.owner.StreamClosed(id)
	}
}
