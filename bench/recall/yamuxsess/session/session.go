// Package session is a cut-down yamux Session owning the stream table.
package session

import (
	"sync"

	"example.com/recall/yamuxsess/stream"
)

type Session struct {
	streamLock sync.Mutex
	streams    map[uint32]*stream.Stream
	nextID     uint32
}

func New() *Session {
	return &Session{streams: make(map[uint32]*stream.Stream), nextID: 1}
}

func (s *Session) Open() *stream.Stream {
	s.streamLock.Lock()
	defer s.streamLock.Unlock()
	id := s.nextID
	s.nextID += 2
	st := stream.New(id, s)
	s.streams[id] = st
	return st
}

// CloseStream implements stream.Owner.
func (s *Session) CloseStream(id uint32) {
	s.streamLock.Lock()
	delete(s.streams, id)
	s.streamLock.Unlock()
}

// Close tears the session down and force-closes every live stream.
func (s *Session) Close() {
	s.streamLock.Lock()
	defer s.streamLock.Unlock()
	for _, st := range s.streams {
		st.ForceClose()
	}
	s.streams = nil
}
