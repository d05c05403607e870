// Project: xtaci/smux (stream.go, session.go), v1.0.x, November 2016.
// Bug: Stream.Close kept the stream's dieLock (deferred unlock) while it told the session through Session.streamClosed, which takes the session's streamLock, while Session.Close held streamLock and called sessionClose on every stream, which takes that stream's dieLock, so closing a stream while the session shuts down deadlocks AB-BA (PR #8 "Fixed deadlock on concurrent closing", reported from getlantern/lantern; the fix releases dieLock before calling into the session).
package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

const errBrokenPipe = "broken pipe"

const (
	cmdSYN byte = iota
	cmdRST
	cmdPSH
	cmdNOP
)

type Frame struct {
	ver  byte
	cmd  byte
	sid  uint32
	data []byte
}

func newFrame(cmd byte, sid uint32) Frame { return Frame{ver: 1, cmd: cmd, sid: sid} }

// fakeConn is the underlying io.ReadWriteCloser (a TCP or KCP connection).
type fakeConn struct {
	closed chan struct{}
	once   sync.Once
	sent   [][]byte
}

func (c *fakeConn) Read(p []byte) (int, error) { <-c.closed; return 0, errors.New("closed") }
func (c *fakeConn) Write(p []byte) (int, error) {
	c.sent = append(c.sent, append([]byte(nil), p...))
	return len(p), nil
}
func (c *fakeConn) Close() error { c.once.Do(func() { close(c.closed) }); return nil }

type Session struct {
	conn         *fakeConn
	writeLock    sync.Mutex
	bucket       int32
	bucketNotify chan struct{}
	streams      map[uint32]*Stream
	streamLock   sync.Mutex
	die          chan struct{}
	dieLock      sync.Mutex
}

func newSession(conn *fakeConn) *Session {
	s := &Session{conn: conn, bucket: 4096, bucketNotify: make(chan struct{}, 1),
		streams: make(map[uint32]*Stream), die: make(chan struct{})}
	go s.recvLoop()
	return s
}

func (s *Session) OpenStream(sid uint32) *Stream {
	stream := &Stream{id: sid, sess: s, chReadEvent: make(chan struct{}, 1), die: make(chan struct{})}
	s.writeFrame(newFrame(cmdSYN, sid))
	s.streamLock.Lock()
	s.streams[sid] = stream
	s.streamLock.Unlock()
	return stream
}

// Close is used to close the session and all streams.
func (s *Session) Close() error {
	s.dieLock.Lock()
	defer s.dieLock.Unlock()
	select {
	case <-s.die:
		return errors.New(errBrokenPipe)
	default:
		close(s.die)
		s.streamLock.Lock()
		for k := range s.streams {
			s.streams[k].sessionClose()
		}
		s.streamLock.Unlock()
		s.notifyBucket()
		return s.conn.Close()
	}
}

func (s *Session) notifyBucket() {
	select {
	case s.bucketNotify <- struct{}{}:
	default:
	}
}

// streamClosed is called by a stream when it is closed, to return its tokens.
func (s *Session) streamClosed(sid uint32) {
	s.streamLock.Lock()
	if n := s.streams[sid].recycleTokens(); n > 0 {
		if atomic.AddInt32(&s.bucket, int32(n)) > 0 {
			s.notifyBucket()
		}
	}
	delete(s.streams, sid)
	s.streamLock.Unlock()
}

func (s *Session) recvLoop() {
	buf := make([]byte, 1<<16)
	if _, err := s.conn.Read(buf); err != nil {
		return
	}
}

func (s *Session) writeFrame(f Frame) (int, error) {
	select {
	case <-s.die:
		return 0, errors.New(errBrokenPipe)
	default:
	}
	hdr := make([]byte, 8)
	hdr[0], hdr[1] = f.ver, f.cmd
	binary.LittleEndian.PutUint32(hdr[4:], f.sid)
	s.writeLock.Lock()
	defer s.writeLock.Unlock()
	return s.conn.Write(append(hdr, f.data...))
}

type Stream struct {
	id          uint32
	sess        *Session
	buffer      []byte
	bufferLock  sync.Mutex
	chReadEvent chan struct{}
	die         chan struct{}
	dieLock     sync.Mutex
}

// raceWindow stands for the scheduling gap between closing s.die and
// reporting to the session; it only widens the real window.
var raceWindow = func() {}

// Close implements io.ReadWriteCloser.
func (s *Stream) Close() error {
	s.dieLock.Lock()

	select {
	case <-s.die:
		s.dieLock.Unlock()
		return errors.New(errBrokenPipe)
	default:
		close(s.die)
		raceWindow()
		s.dieLock.Unlock()
		s.sess.streamClosed(s.id)
		_, err := s.sess.writeFrame(newFrame(cmdRST, s.id))
		return err
	}
}

// sessionClose is called by the session when it closes the stream.
func (s *Stream) sessionClose() {
	s.dieLock.Lock()
	defer s.dieLock.Unlock()
	select {
	case <-s.die:
	default:
		close(s.die)
	}
}

func (s *Stream) recycleTokens() (n int) {
	s.bufferLock.Lock()
	n = len(s.buffer)
	s.buffer = nil
	s.bufferLock.Unlock()
	return
}

func main() {
	sess := newSession(&fakeConn{closed: make(chan struct{})})
	stream := sess.OpenStream(1)
	stream.buffer = []byte("unread data")

	closing := make(chan struct{})
	raceWindow = func() {
		close(closing)
		time.Sleep(100 * time.Millisecond)
	}
	done := make(chan error)
	go func() { done <- stream.Close() }() // application closes its stream

	<-closing
	fmt.Println("session close:", sess.Close()) // keepalive timeout closes the session
	fmt.Println("stream close:", <-done)
}
