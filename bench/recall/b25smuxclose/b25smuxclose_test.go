// Project: xtaci/smux
// Bug: Session.Close held s.streamLock while closing the underlying conn and waiting for recvLoop to exit, but recvLoop needs s.streamLock to dispatch an in-flight cmdPSH frame to its stream, so it never observes the closed conn.
// Fix: Close only holds streamLock while notifying the streams, and waits for recvLoop after releasing it.
package b25smuxclose

import (
	"errors"
	"io"
	"sync"
	"testing"
	"time"
)

const (
	cmdSYN byte = iota
	cmdFIN
	cmdPSH
	cmdNOP
)

var errBrokenPipe = errors.New("broken pipe")

type Frame struct {
	ver  byte
	cmd  byte
	sid  uint32
	data []byte
}

type Config struct {
	Version           int
	KeepAliveInterval time.Duration
	MaxReceiveBuffer  int
}

type pipeConn struct {
	in        chan Frame
	closeOnce sync.Once
	closed    chan struct{}
}

func (c *pipeConn) ReadFrame() (Frame, error) {
	select {
	case f := <-c.in:
		return f, nil
	case <-c.closed:
		return Frame{}, io.EOF
	}
}

func (c *pipeConn) WriteFrame(f Frame) error {
	time.Sleep(20 * time.Millisecond)
	return nil
}

func (c *pipeConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

type Stream struct {
	id          uint32
	sess        *Session
	bufferLock  sync.Mutex
	buffers     [][]byte
	chReadEvent chan struct{}
	die         chan struct{}
	dieOnce     sync.Once
	fin         bool
}

func newStream(id uint32, sess *Session) *Stream {
	return &Stream{id: id, sess: sess, chReadEvent: make(chan struct{}, 1), die: make(chan struct{})}
}

func (s *Stream) pushBytes(buf []byte) {
	s.bufferLock.Lock()
	s.buffers = append(s.buffers, buf)
	s.bufferLock.Unlock()
}

func (s *Stream) notifyReadEvent() {
	select {
	case s.chReadEvent <- struct{}{}:
	default:
	}
}

func (s *Stream) sessionClose() { s.dieOnce.Do(func() { close(s.die) }) }

type Session struct {
	conn       *pipeConn
	config     *Config
	streams    map[uint32]*Stream
	streamLock sync.Mutex
	die        chan struct{}
	dieOnce    sync.Once
	recvDone   chan struct{}
	bucket     int32
}

func newSession(config *Config, conn *pipeConn) *Session {
	s := &Session{
		conn:     conn,
		config:   config,
		streams:  make(map[uint32]*Stream),
		die:      make(chan struct{}),
		recvDone: make(chan struct{}),
		bucket:   int32(config.MaxReceiveBuffer),
	}
	go s.recvLoop()
	return s
}

func (s *Session) OpenStream(id uint32) *Stream {
	st := newStream(id, s)
	s.streamLock.Lock()
	s.streams[id] = st
	s.streamLock.Unlock()
	return st
}

func (s *Session) recvLoop() {
	defer close(s.recvDone)
	for {
		f, err := s.conn.ReadFrame()
		if err != nil {
			return
		}
		switch f.cmd {
		case cmdNOP:
		case cmdFIN:
			s.streamLock.Lock()
			if st, ok := s.streams[f.sid]; ok {
				st.fin = true
				st.notifyReadEvent()
			}
			s.streamLock.Unlock()
		case cmdPSH:
			s.streamLock.Lock()
			if st, ok := s.streams[f.sid]; ok {
				st.pushBytes(f.data)
				s.bucket -= int32(len(f.data))
				st.notifyReadEvent()
			}
			s.streamLock.Unlock()
		}
	}
}

func (s *Session) Close() error {
	var once bool
	s.dieOnce.Do(func() {
		close(s.die)
		once = true
	})
	if !once {
		return io.ErrClosedPipe
	}
	s.streamLock.Lock()
	defer s.streamLock.Unlock()
	for k := range s.streams {
		s.streams[k].sessionClose()
		if err := s.conn.WriteFrame(Frame{ver: byte(s.config.Version), cmd: cmdFIN, sid: k}); err != nil {
			return errBrokenPipe
		}
	}
	s.conn.Close()
	<-s.recvDone
	return nil
}

func TestProbe(t *testing.T) {
	conn := &pipeConn{in: make(chan Frame), closed: make(chan struct{})}
	sess := newSession(&Config{Version: 1, KeepAliveInterval: 10 * time.Second, MaxReceiveBuffer: 4 << 20}, conn)
	st := sess.OpenStream(3)

	go func() {
		time.Sleep(5 * time.Millisecond)
		select {
		case conn.in <- Frame{ver: 1, cmd: cmdPSH, sid: st.id, data: []byte("tail")}:
		case <-conn.closed:
		}
	}()

	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-st.die:
	default:
		t.Fatal("stream not closed")
	}
}
