// Project: quic-go, streamsMap.GetOrOpenStream.
// Bug: approximate (pre-1.0 streamsMap, ~2017): when a peer opened more streams than allowed,
// GetOrOpenStream returned the TooManyOpenStreams error without releasing m.mutex; the session's
// run loop then closed the session via streamsMap.CloseWithError (m.mutex) and the application's
// OpenStream (m.mutex) hung forever.
// Fix: release m.mutex on every error return (the map later switched to defer m.mutex.Unlock()).
package quicstreams

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

type StreamID uint64

var errTooManyOpenStreams = errors.New("TooManyOpenStreams")

type stream struct {
	id      StreamID
	mu      sync.Mutex
	closed  error
	dataLen int
}

func (s *stream) handleStreamFrame(data []byte) { s.mu.Lock(); s.dataLen += len(data); s.mu.Unlock() }
func (s *stream) cancel(err error)              { s.mu.Lock(); s.closed = err; s.mu.Unlock() }

type streamsMap struct {
	mutex                     sync.RWMutex
	streams                   map[StreamID]*stream
	newStream                 func(StreamID) *stream
	nextStream                StreamID // the next stream ID to open locally
	highestStreamOpenedByPeer StreamID
	numIncomingStreams        uint32
	maxIncomingStreams        uint32
	closeErr                  error
}

func newStreamsMap(newStream func(StreamID) *stream, maxIncoming uint32) *streamsMap {
	return &streamsMap{streams: map[StreamID]*stream{}, newStream: newStream, nextStream: 2,
		highestStreamOpenedByPeer: 1, maxIncomingStreams: maxIncoming}
}

// GetOrOpenStream either returns an existing stream or, for a peer-initiated ID, opens it
// (and all lower-numbered peer streams).
func (m *streamsMap) GetOrOpenStream(id StreamID) (*stream, error) {
	m.mutex.RLock()
	s, ok := m.streams[id]
	m.mutex.RUnlock()
	if ok {
		return s, nil
	}

	m.mutex.Lock()
	if s, ok := m.streams[id]; ok { // double-check under the write lock
		m.mutex.Unlock()
		return s, nil
	}
	if id%2 == 0 {
		m.mutex.Unlock()
		return nil, fmt.Errorf("InvalidStreamID: peer attempted to open stream %d", id)
	}
	if id <= m.highestStreamOpenedByPeer { // already closed
		m.mutex.Unlock()
		return nil, nil
	}
	for sid := m.highestStreamOpenedByPeer + 2; sid <= id; sid += 2 {
		if m.numIncomingStreams >= m.maxIncomingStreams {
			return nil, errTooManyOpenStreams
		}
		m.streams[sid] = m.newStream(sid)
		m.numIncomingStreams++
	}
	m.highestStreamOpenedByPeer = id
	s = m.streams[id]
	m.mutex.Unlock()
	return s, nil
}

func (m *streamsMap) OpenStream() (*stream, error) {
	m.mutex.Lock()
	defer m.mutex.Unlock()
	if m.closeErr != nil {
		return nil, m.closeErr
	}
	s := m.newStream(m.nextStream)
	m.streams[m.nextStream] = s
	m.nextStream += 2
	return s, nil
}

func (m *streamsMap) CloseWithError(err error) {
	m.mutex.Lock()
	defer m.mutex.Unlock()
	m.closeErr = err
	for _, s := range m.streams {
		s.cancel(err)
	}
}

type streamFrame struct {
	StreamID StreamID
	Data     []byte
}

type session struct {
	streamsMap *streamsMap
}

func (s *session) handleStreamFrame(f *streamFrame) error {
	str, err := s.streamsMap.GetOrOpenStream(f.StreamID)
	if err != nil {
		return err
	}
	if str == nil { // stream was already closed, ignore
		return nil
	}
	str.handleStreamFrame(f.Data)
	return nil
}

// run is the session's main loop handling incoming packets.
func (s *session) run(frames []*streamFrame) {
	for _, f := range frames {
		if err := s.handleStreamFrame(f); err != nil {
			s.closeLocal(err)
			return
		}
	}
}

func (s *session) closeLocal(err error) { s.streamsMap.CloseWithError(err) }

func TestStreamsMapLeakedLock(t *testing.T) {
	sess := &session{}
	sess.streamsMap = newStreamsMap(func(id StreamID) *stream { return &stream{id: id} }, 2)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		sess.run([]*streamFrame{{3, []byte("a")}, {5, []byte("b")}, {7, []byte("c")}})
	}()
	go func() { // application opening a stream
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		if _, err := sess.streamsMap.OpenStream(); err != nil {
			t.Logf("OpenStream: %v", err)
		}
	}()
	wg.Wait()
}
