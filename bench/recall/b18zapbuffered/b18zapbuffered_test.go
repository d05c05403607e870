// Project: uber-go/zap (zapcore/buffered_write_syncer.go)
// Bug: BufferedWriteSyncer.Stop flushed and fsynced the buffer, closed s.stop, then
//      waited on <-s.done all inside its s.mu critical section. If the
//      periodic flushLoop had already received a tick, it is blocked in
//      Sync() on s.mu and can never reach the stop case and close s.done.
// Fix: Stop only signals flushLoop inside the critical section and waits
//      for <-s.done after releasing s.mu.

package b18zapbuffered

import (
	"bufio"
	"errors"
	"sync"
	"testing"
	"time"
)

const (
	_defaultBufferSize    = 256 * 1024
	_defaultFlushInterval = 30 * time.Second
)

type WriteSyncer interface {
	Write(p []byte) (int, error)
	Sync() error
}

type BufferedWriteSyncer struct {
	WS            WriteSyncer
	Size          int
	FlushInterval time.Duration

	mu          sync.Mutex
	initialized bool
	stopped     bool
	writer      *bufio.Writer
	ticker      *time.Ticker
	stop        chan struct{}
	done        chan struct{}
}

func (s *BufferedWriteSyncer) initialize() {
	size := s.Size
	if size == 0 {
		size = _defaultBufferSize
	}
	flushInterval := s.FlushInterval
	if flushInterval == 0 {
		flushInterval = _defaultFlushInterval
	}
	s.ticker = time.NewTicker(flushInterval)
	s.writer = bufio.NewWriterSize(s.WS, size)
	s.stop = make(chan struct{})
	s.done = make(chan struct{})
	s.initialized = true
	go s.flushLoop()
}

// Write writes log data into buffer syncer directly, multiple Write calls will be batched,
// and log data will be flushed to disk when the buffer is full or periodically.
func (s *BufferedWriteSyncer) Write(bs []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.initialized {
		s.initialize()
	}
	if s.stopped {
		return 0, errors.New("write to stopped syncer")
	}
	if len(bs) > s.writer.Available() && s.writer.Buffered() > 0 {
		if err := s.writer.Flush(); err != nil {
			return 0, err
		}
	}
	return s.writer.Write(bs)
}

// Sync flushes buffered log data into disk directly.
func (s *BufferedWriteSyncer) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	if s.initialized {
		err = s.writer.Flush()
	}
	return errors.Join(err, s.WS.Sync())
}

// flushLoop flushes the buffer at the configured interval until Stop is
// called.
func (s *BufferedWriteSyncer) flushLoop() {
	defer close(s.done)
	for {
		select {
		case <-s.ticker.C:
			// we just simply ignore error here
			// because the underlying bufio writer stores any errors
			// and we return any error from Sync() as part of the close
			_ = s.Sync()
		case <-s.stop:
			return
		}
	}
}

// Stop closes the buffer, cleans up background goroutines, and flushes
// remaining unwritten data.
func (s *BufferedWriteSyncer) Stop() (err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.initialized || s.stopped {
		return nil
	}
	s.stopped = true
	// Persist what is still buffered before shutting the loop down.
	err = errors.Join(s.writer.Flush(), s.WS.Sync())
	s.ticker.Stop()
	close(s.stop) // tell flushLoop to stop
	<-s.done      // and wait until it has
	return err
}

// slowFile is a log file on a slow network volume.
type slowFile struct {
	mu      sync.Mutex
	written int
	syncs   int
}

func (f *slowFile) Write(p []byte) (int, error) {
	f.mu.Lock()
	f.written += len(p)
	f.mu.Unlock()
	return len(p), nil
}

func (f *slowFile) Sync() error {
	time.Sleep(40 * time.Millisecond) // fsync on a network volume
	f.mu.Lock()
	f.syncs++
	f.mu.Unlock()
	return nil
}

func TestStopWhileFlushLoopTicks(t *testing.T) {
	ws := &BufferedWriteSyncer{WS: &slowFile{}, Size: 4096, FlushInterval: 5 * time.Millisecond}
	if _, err := ws.Write([]byte(`{"level":"info","msg":"server started","port":8080}` + "\n")); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error)
	go func() { // logger.Sync on process shutdown
		_, _ = ws.Write([]byte(`{"level":"info","msg":"shutting down"}` + "\n"))
		errc <- ws.Stop()
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}
