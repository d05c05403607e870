// Package mux is a trimmed-down stream multiplexer session modelled on
// hashicorp/yamux: the session owns a stream map under streamLock, each
// stream has its own stateLock, and neither lock is held while acquiring
// the other.
package mux

import "sync"

// Session multiplexes streams.
type Session struct {
	streamLock sync.Mutex
	streams    map[uint32]*Stream
	nextID     uint32

	statsLock sync.Mutex
	closedN   int
}

// NewSession creates a session.
func NewSession() *Session {
	return &Session{streams: make(map[uint32]*Stream), nextID: 1}
}

// OpenStream registers a new stream.
func (s *Session) OpenStream() *Stream {
	s.streamLock.Lock()
	defer s.streamLock.Unlock()
	id := s.nextID
	s.nextID += 2
	st := &Stream{id: id, session: s}
	s.streams[id] = st
	return st
}

// closeStream is invoked by a stream after it released its own lock.
func (s *Session) closeStream(id uint32) {
	s.streamLock.Lock()
	delete(s.streams, id)
	s.streamLock.Unlock()

	s.statsLock.Lock()
	s.closedN++
	s.statsLock.Unlock()
}

// Close snapshots the stream map, releases the map lock, then closes
// each stream (which calls back into closeStream).
func (s *Session) Close() int {
	s.streamLock.Lock()
	streams := make([]*Stream, 0, len(s.streams))
	for _, st := range s.streams {
		streams = append(streams, st)
	}
	s.streamLock.Unlock()

	for _, st := range streams {
		st.Close()
	}
	s.statsLock.Lock()
	defer s.statsLock.Unlock()
	return s.closedN
}
