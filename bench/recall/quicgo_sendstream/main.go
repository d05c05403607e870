// Project: quic-go (send_stream.go, framer.go, session.go)
// Bug: sendStream.Close held s.mutex while calling s.sender.onHasStreamData, which goes
//   through the session into framer.AddActiveStream (framer.mutex). The run loop holds
//   framer.mutex in AppendStreamFrames and calls popStreamFrame, which takes s.mutex: AB-BA.
// Upstream fix: call onHasStreamData only after releasing s.mutex (quic-go #1679, fixes #1658)

package main

import (
	"fmt"
	"sync"
)

type (
	StreamID  uint64
	ByteCount uint64
)

type StreamFrame struct {
	StreamID StreamID
	Data     []byte
	Fin      bool
}

type streamSender interface {
	onHasStreamData(StreamID)
}

type sendStreamI interface {
	popStreamFrame(maxBytes ByteCount) (*StreamFrame, bool)
}

type streamGetter interface {
	GetOrOpenSendStream(StreamID) (sendStreamI, error)
}

type framer struct {
	mutex         sync.Mutex
	streamGetter  streamGetter
	activeStreams map[StreamID]struct{}
	streamQueue   []StreamID
}

func (f *framer) AddActiveStream(id StreamID) {
	f.mutex.Lock()
	if _, ok := f.activeStreams[id]; !ok {
		f.streamQueue = append(f.streamQueue, id)
		f.activeStreams[id] = struct{}{}
	}
	f.mutex.Unlock()
}

func (f *framer) AppendStreamFrames(frames []*StreamFrame, maxLen ByteCount) ([]*StreamFrame, ByteCount) {
	var length ByteCount
	f.mutex.Lock()
	defer f.mutex.Unlock()
	numActiveStreams := len(f.streamQueue)
	for i := 0; i < numActiveStreams; i++ {
		id := f.streamQueue[0]
		f.streamQueue = f.streamQueue[1:]
		str, err := f.streamGetter.GetOrOpenSendStream(id)
		if err != nil || str == nil {
			delete(f.activeStreams, id)
			continue
		}
		frame, hasMoreData := str.popStreamFrame(maxLen - length)
		if hasMoreData {
			f.streamQueue = append(f.streamQueue, id)
		} else {
			delete(f.activeStreams, id)
		}
		if frame != nil {
			frames = append(frames, frame)
			length += ByteCount(len(frame.Data))
		}
	}
	return frames, length
}

type sendStream struct {
	mutex           sync.Mutex
	streamID        StreamID
	sender          streamSender
	dataForWriting  []byte
	finishedWriting bool
	finSent         bool
}

func (s *sendStream) Write(p []byte) (int, error) {
	s.mutex.Lock()
	s.dataForWriting = append(s.dataForWriting, p...)
	s.mutex.Unlock()
	s.sender.onHasStreamData(s.streamID)
	return len(p), nil
}

func (s *sendStream) popStreamFrame(maxBytes ByteCount) (*StreamFrame, bool) {
	s.mutex.Lock()
	defer s.mutex.Unlock()
	if s.finSent || (len(s.dataForWriting) == 0 && !s.finishedWriting) {
		return nil, false
	}
	n := min(ByteCount(len(s.dataForWriting)), maxBytes)
	f := &StreamFrame{StreamID: s.streamID, Data: s.dataForWriting[:n]}
	s.dataForWriting = s.dataForWriting[n:]
	f.Fin = len(s.dataForWriting) == 0 && s.finishedWriting
	s.finSent = f.Fin
	return f, len(s.dataForWriting) > 0
}

func (s *sendStream) Close() error {
	s.mutex.Lock()
	defer s.mutex.Unlock()
	if s.finishedWriting {
		return nil
	}
	s.finishedWriting = true
	s.sender.onHasStreamData(s.streamID) // need to send the FIN
	return nil
}

type uniStreamSender struct {
	streamSender
}

type session struct {
	framer           *framer
	streamsMu        sync.Mutex
	streams          map[StreamID]*sendStream
	sendingScheduled chan struct{}
	closeChan        chan struct{}
}

func newSession() *session {
	s := &session{
		streams:          make(map[StreamID]*sendStream),
		sendingScheduled: make(chan struct{}, 1),
		closeChan:        make(chan struct{}),
	}
	s.framer = &framer{streamGetter: s, activeStreams: make(map[StreamID]struct{})}
	return s
}

func (s *session) GetOrOpenSendStream(id StreamID) (sendStreamI, error) {
	s.streamsMu.Lock()
	defer s.streamsMu.Unlock()
	if str, ok := s.streams[id]; ok {
		return str, nil
	}
	return nil, nil
}

func (s *session) OpenUniStream() *sendStream {
	s.streamsMu.Lock()
	defer s.streamsMu.Unlock()
	id := StreamID(2 + 4*len(s.streams))
	str := &sendStream{streamID: id, sender: &uniStreamSender{streamSender: s}}
	s.streams[id] = str
	return str
}

func (s *session) onHasStreamData(id StreamID) {
	s.framer.AddActiveStream(id)
	select { // scheduleSending
	case s.sendingScheduled <- struct{}{}:
	default:
	}
}

func (s *session) run() {
	for {
		select {
		case <-s.closeChan:
			return
		case <-s.sendingScheduled:
			s.framer.AppendStreamFrames(nil, 1200) // pack a packet
		}
	}
}

func main() {
	sess := newSession()
	go sess.run()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			str := sess.OpenUniStream()
			for j := 0; j < 100; j++ {
				str.Write([]byte("hello quic"))
			}
			str.Close()
		}()
	}
	wg.Wait()
	close(sess.closeChan)
	fmt.Println("done")
}
