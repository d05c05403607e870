// Project: kubernetes, vendored github.com/docker/spdystream (connection.go: idleAwareFramer.WriteFrame, idleAwareFramer.monitor), used for kubectl exec/attach/port-forward streams, 2015 (GoKer kubernetes#6632, spdystream issue #49).
// Bug: WriteFrame holds the framer's writeLock while it signals activity on the small buffered resetChan, and the monitor goroutine is the only reader of resetChan. When the connection closes, monitor leaves its select loop and takes writeLock to close resetChan, but a writer that already holds writeLock is blocked on the now full resetChan, so monitor, that writer and every other stream writer hang. The fix starts a goroutine that drains resetChan before monitor takes writeLock.
package main

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"
)

type StreamId uint32

// DataFrame is the spdy frame carrying stream data.
type DataFrame struct {
	StreamId StreamId
	Data     []byte
}

// Framer serializes frames onto the wire.
type Framer struct {
	w bytes.Buffer
}

func (f *Framer) WriteFrame(frame *DataFrame) error {
	f.w.Write(frame.Data)
	if f.w.Len() > 1<<16 {
		f.w.Reset()
	}
	return nil
}

// idleAwareFramer wraps the framer and resets the idle timer on every write.
type idleAwareFramer struct {
	f              *Framer
	conn           *Connection
	writeLock      sync.Mutex
	resetChan      chan struct{}
	setTimeoutLock sync.Mutex
	setTimeoutChan chan time.Duration
	timeout        time.Duration
}

func newIdleAwareFramer(framer *Framer) *idleAwareFramer {
	return &idleAwareFramer{
		f:              framer,
		resetChan:      make(chan struct{}, 2),
		setTimeoutChan: make(chan time.Duration, 1),
	}
}

func (i *idleAwareFramer) monitor() {
	var (
		timer          *time.Timer
		expired        <-chan time.Time
		resetChan      = i.resetChan
		setTimeoutChan = i.setTimeoutChan
	)
Loop:
	for {
		select {
		case timeout := <-i.setTimeoutChan:
			i.timeout = timeout
			if timeout == 0 {
				if timer != nil {
					timer.Stop()
				}
			} else if timer == nil {
				timer = time.NewTimer(timeout)
				expired = timer.C
			} else {
				timer.Reset(timeout)
			}
		case <-resetChan:
			if timer != nil && i.timeout > 0 {
				timer.Reset(i.timeout)
			}
		case <-expired:
			go i.conn.Close()
		case <-i.conn.closeChan:
			if timer != nil {
				timer.Stop()
			}

			i.writeLock.Lock()
			close(resetChan)
			i.resetChan = nil
			i.writeLock.Unlock()

			i.setTimeoutLock.Lock()
			close(i.setTimeoutChan)
			i.setTimeoutChan = nil
			i.setTimeoutLock.Unlock()

			break Loop
		}
	}

	// Drain resetChan
	for range resetChan {
	}
	for range setTimeoutChan {
	}
}

func (i *idleAwareFramer) WriteFrame(frame *DataFrame) error {
	i.writeLock.Lock()
	defer i.writeLock.Unlock()
	if i.resetChan == nil {
		return io.EOF
	}
	err := i.f.WriteFrame(frame)
	if err != nil {
		return err
	}

	i.resetChan <- struct{}{}

	return nil
}

// Connection is a spdy connection multiplexing many streams.
type Connection struct {
	framer       *idleAwareFramer
	closeChan    chan bool
	shutdownOnce sync.Once
	streamLock   sync.Mutex
	streams      map[StreamId]*Stream
	nextId       StreamId
}

func NewConnection() *Connection {
	framer := newIdleAwareFramer(&Framer{})
	c := &Connection{
		framer:    framer,
		closeChan: make(chan bool),
		streams:   make(map[StreamId]*Stream),
		nextId:    1,
	}
	framer.conn = c
	go framer.monitor()
	return c
}

func (s *Connection) CreateStream() *Stream {
	s.streamLock.Lock()
	defer s.streamLock.Unlock()
	st := &Stream{streamId: s.nextId, conn: s}
	s.streams[st.streamId] = st
	s.nextId += 2
	return st
}

func (s *Connection) Close() error {
	s.shutdownOnce.Do(func() { close(s.closeChan) })
	return nil
}

// Stream is one logical stream (stdin/stdout/port-forward data).
type Stream struct {
	streamId StreamId
	conn     *Connection
}

func (s *Stream) Write(data []byte) (int, error) {
	if err := s.conn.framer.WriteFrame(&DataFrame{StreamId: s.streamId, Data: data}); err != nil {
		return 0, err
	}
	return len(data), nil
}

func main() {
	// One P makes the writer/monitor interleaving reproducible.
	runtime.GOMAXPROCS(1)
	conn := NewConnection()
	var wg sync.WaitGroup
	// kubectl exec: stdout and stderr of the container are copied onto the
	// connection by several goroutines.
	for n := 0; n < 8; n++ {
		st := conn.CreateStream()
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := []byte("container output\n")
			for {
				if _, err := st.Write(buf); err != nil {
					return
				}
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	// The client goes away while output is still flowing.
	conn.Close()
	wg.Wait()
	fmt.Println("connection closed, all stream writers returned")
}
