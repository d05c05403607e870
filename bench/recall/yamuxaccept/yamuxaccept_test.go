// Project: hashicorp/yamux, Session.incomingStream.
// Bug: approximate (early yamux): incomingStream registered the new stream and then did a blocking
// send on s.acceptCh while still holding s.streamLock; once the accept backlog was full the recvLoop
// stalled with streamLock held, and the application, which calls NumStreams()/OpenStream() (both take
// streamLock) before AcceptStream(), could never drain acceptCh.
// Fix: non-blocking send with a default branch that resets the stream ("backlog exceeded").
package yamuxaccept

import (
	"errors"
	"sync"
	"testing"
	"time"
)

const (
	typeData         uint8  = 0
	typeWindowUpdate uint8  = 1
	flagSYN          uint16 = 1
	flagRST          uint16 = 8
)

var ErrConnectionWriteTimeout = errors.New("connection write timeout")

type header struct {
	msgType  uint8
	flags    uint16
	streamID uint32
	length   uint32
}

type Stream struct {
	id      uint32
	session *Session
	state   int
}

type Session struct {
	streamLock sync.Mutex
	streams    map[uint32]*Stream
	nextID     uint32
	acceptCh   chan *Stream
	sendCh     chan header
	shutdownCh chan struct{}
	logf       func(string, ...any)
}

func newSession(acceptBacklog int, logf func(string, ...any)) *Session {
	return &Session{streams: map[uint32]*Stream{}, nextID: 2, acceptCh: make(chan *Stream, acceptBacklog),
		sendCh: make(chan header, 64), shutdownCh: make(chan struct{}), logf: logf}
}

// recvLoop reads frames off the connection and dispatches them.
func (s *Session) recvLoop(frames []header) error {
	for _, hdr := range frames {
		if err := s.handleStreamMessage(hdr); err != nil {
			return err
		}
	}
	return nil
}

func (s *Session) handleStreamMessage(hdr header) error {
	if hdr.flags&flagSYN == flagSYN {
		if err := s.incomingStream(hdr.streamID); err != nil {
			return err
		}
	}
	s.streamLock.Lock()
	stream := s.streams[hdr.streamID]
	s.streamLock.Unlock()
	if stream == nil {
		s.logf("[WARN] yamux: frame for missing stream %d", hdr.streamID)
		return nil
	}
	return nil
}

// incomingStream is used to create a new incoming stream.
func (s *Session) incomingStream(id uint32) error {
	stream := &Stream{id: id, session: s}
	s.streamLock.Lock()
	defer s.streamLock.Unlock()
	if _, ok := s.streams[id]; ok {
		return errors.New("duplicate stream declared")
	}
	s.streams[id] = stream
	s.acceptCh <- stream
	return nil
}

func (s *Session) sendNoWait(hdr header) error {
	select {
	case s.sendCh <- hdr:
		return nil
	case <-time.After(time.Second):
		return ErrConnectionWriteTimeout
	}
}

func (s *Session) NumStreams() int {
	s.streamLock.Lock()
	n := len(s.streams)
	s.streamLock.Unlock()
	return n
}

func (s *Session) AcceptStream() (*Stream, error) {
	select {
	case stream := <-s.acceptCh:
		return stream, nil
	case <-s.shutdownCh:
		return nil, errors.New("session shutdown")
	}
}

func TestAcceptBacklogDeadlock(t *testing.T) {
	sess := newSession(1, t.Logf)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // recvLoop: the peer opens two streams back to back
		defer wg.Done()
		if err := sess.recvLoop([]header{
			{typeWindowUpdate, flagSYN, 1, 0}, {typeData, 0, 1, 5},
			{typeWindowUpdate, flagSYN, 3, 0}, {typeData, 0, 3, 5},
		}); err != nil {
			t.Errorf("recvLoop: %v", err)
		}
	}()
	go func() { // application accept loop
		defer wg.Done()
		time.Sleep(30 * time.Millisecond)
		t.Logf("open streams: %d", sess.NumStreams())
		st, err := sess.AcceptStream()
		if err != nil {
			t.Errorf("accept: %v", err)
			return
		}
		t.Logf("accepted stream %d", st.id)
	}()
	wg.Wait()
}
