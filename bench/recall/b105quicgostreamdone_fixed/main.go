// Project: lucas-clemente/quic-go (receive_stream.go, stream.go, streams_map_legacy.go, session.go), v0.8 era, May 2018.
// Bug: receiveStream.Read holds the stream mutex when the application reads the FIN and calls s.sender.onStreamCompleted, which goes through the bidirectional stream's completion callback to session.onStreamCompleted and streamsMapLegacy.DeleteStream (streams map mutex); a concurrent session close runs streamsMapLegacy.CloseWithError, which holds the streams map mutex and calls closeForShutdown on every stream (stream mutex), an AB-BA deadlock (issue #1364, fixed by PR #1382 which calls onStreamCompleted after unlocking).
package main

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

type StreamID uint64

type streamSender interface{ onStreamCompleted(StreamID) }

// uniStreamSender is used by the two halves of a bidirectional stream.
type uniStreamSender struct {
	streamSender
	onStreamCompletedImpl func()
}

func (s *uniStreamSender) onStreamCompleted(StreamID) { s.onStreamCompletedImpl() }

type receiveStream struct {
	mutex                                   sync.Mutex
	streamID                                StreamID
	sender                                  streamSender
	frameQueue                              [][]byte
	finReceived, finRead, closedForShutdown bool
	closeForShutdownErr                     error
}

var testHookRead = func() {} // widens the race window; a no-op in quic-go

func (s *receiveStream) Read(p []byte) (int, error) {
	s.mutex.Lock()
	completed, n, err := s.readImpl(p)
	s.mutex.Unlock()
	if completed {
		s.sender.onStreamCompleted(s.streamID) // called after releasing s.mutex
	}
	return n, err
}

func (s *receiveStream) readImpl(p []byte) (bool, int, error) {
	if s.finRead {
		return false, 0, io.EOF
	}
	if s.closedForShutdown {
		return false, 0, s.closeForShutdownErr
	}
	n := 0
	for len(s.frameQueue) > 0 && n+len(s.frameQueue[0]) <= len(p) {
		n += copy(p[n:], s.frameQueue[0])
		s.frameQueue = s.frameQueue[1:]
	}
	if len(s.frameQueue) == 0 && s.finReceived {
		s.finRead = true
		testHookRead()
		return true, n, io.EOF
	}
	return false, n, nil
}

func (s *receiveStream) closeForShutdown(err error) {
	s.mutex.Lock()
	s.closedForShutdown = true
	s.closeForShutdownErr = err
	s.mutex.Unlock()
}

type sendStream struct {
	mutex                       sync.Mutex
	streamID                    StreamID
	sender                      streamSender
	finAcked, closedForShutdown bool
}

func (s *sendStream) handleFinAcked() {
	s.mutex.Lock()
	s.finAcked = true
	s.mutex.Unlock()
	s.sender.onStreamCompleted(s.streamID)
}

func (s *sendStream) closeForShutdown(error) {
	s.mutex.Lock()
	defer s.mutex.Unlock()
	s.closedForShutdown = true
}

type stream struct {
	receiveStream
	sendStream
	completedMutex                              sync.Mutex
	sender                                      streamSender
	receiveStreamCompleted, sendStreamCompleted bool
}

func newStream(id StreamID, sender streamSender) *stream {
	s := &stream{sender: sender}
	s.sendStream = sendStream{streamID: id, sender: &uniStreamSender{sender, func() {
		s.halfCompleted(&s.sendStreamCompleted)
	}}}
	s.receiveStream = receiveStream{streamID: id, sender: &uniStreamSender{sender, func() {
		s.halfCompleted(&s.receiveStreamCompleted)
	}}}
	return s
}

func (s *stream) halfCompleted(half *bool) {
	s.completedMutex.Lock()
	*half = true
	s.checkIfCompleted()
	s.completedMutex.Unlock()
}

func (s *stream) checkIfCompleted() {
	if s.sendStreamCompleted && s.receiveStreamCompleted {
		s.sender.onStreamCompleted(s.receiveStream.streamID)
	}
}

func (s *stream) closeForShutdown(err error) {
	s.sendStream.closeForShutdown(err)
	s.receiveStream.closeForShutdown(err)
}

type streamsMapLegacy struct {
	mutex   sync.RWMutex
	streams map[StreamID]*stream
}

func (m *streamsMapLegacy) DeleteStream(id StreamID) error {
	m.mutex.Lock()
	defer m.mutex.Unlock()
	if _, ok := m.streams[id]; !ok {
		return fmt.Errorf("tried to delete unknown stream %d", id)
	}
	delete(m.streams, id)
	return nil
}

func (m *streamsMapLegacy) CloseWithError(err error) {
	m.mutex.Lock()
	defer m.mutex.Unlock()
	for _, s := range m.streams {
		s.closeForShutdown(err)
	}
}

type session struct {
	streamsMap *streamsMapLegacy
	closeChan  chan error
	closeOnce  sync.Once
	runDone    chan struct{}
}

func (s *session) run() {
	s.handleCloseError(<-s.closeChan)
	close(s.runDone)
}

func (s *session) handleCloseError(err error) { s.streamsMap.CloseWithError(err) }

func (s *session) closeLocal(err error) { s.closeOnce.Do(func() { s.closeChan <- err }) }

func (s *session) Close(err error) {
	s.closeLocal(err)
	<-s.runDone
}

func (s *session) onStreamCompleted(id StreamID) {
	if err := s.streamsMap.DeleteStream(id); err != nil {
		s.closeLocal(err)
	}
}

func main() {
	sess := &session{streamsMap: &streamsMapLegacy{streams: map[StreamID]*stream{}},
		closeChan: make(chan error, 1), runDone: make(chan struct{})}
	go sess.run()
	str := newStream(5, sess)
	sess.streamsMap.streams[5] = str
	str.sendStream.handleFinAcked()
	str.receiveStream.frameQueue = [][]byte{[]byte("last response bytes")}
	str.receiveStream.finReceived = true // the peer's STREAM frame carried the FIN

	readerHoldsStream, readDone := make(chan struct{}), make(chan struct{})
	testHookRead = func() { close(readerHoldsStream); time.Sleep(100 * time.Millisecond) }
	go func() { // application reading the stream
		n, err := str.Read(make([]byte, 64))
		fmt.Printf("read %d bytes, err=%v\n", n, err)
		close(readDone)
	}()
	<-readerHoldsStream
	sess.Close(errors.New("idle timeout")) // session shuts down concurrently
	<-readDone
}
