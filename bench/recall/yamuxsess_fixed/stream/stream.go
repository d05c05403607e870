// Package stream is a cut-down yamux Stream.
package stream

import "sync"

// Owner is implemented by session.Session (stream table under its own lock).
type Owner interface {
	CloseStream(id uint32)
}

type streamState int

const (
	stateOpen streamState = iota
	stateLocalClose
	stateClosed
)

type Stream struct {
	id        uint32
	owner     Owner
	stateLock sync.Mutex
	state     streamState
}

func New(id uint32, owner Owner) *Stream {
	return &Stream{id: id, owner: owner}
}

// Close half-closes the stream; the second Close removes it from the session.
func (s *Stream) Close() error {
	s.stateLock.Lock()
	switch s.state {
	case stateOpen:
		s.state = stateLocalClose
		s.stateLock.Unlock()
		return nil
	case stateLocalClose:
		s.state = stateClosed
	case stateClosed:
		s.stateLock.Unlock()
		return nil
	}
	s.stateLock.Unlock()
	// Never call back into the session while holding stateLock.
	s.owner.CloseStream(s.id)
	return nil
}

// ForceClose is used by the session on teardown.
func (s *Stream) ForceClose() {
	s.stateLock.Lock()
	s.state = stateClosed
	s.stateLock.Unlock()
}
