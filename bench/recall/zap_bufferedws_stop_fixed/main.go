// Project: uber-go/zap (zapcore/buffered_write_syncer.go)
// Bug: BufferedWriteSyncer.Stop took s.mu, stopped the ticker, closed s.stop and then
// waited for the flush loop to exit (<-s.done) while still holding s.mu. If the flush
// ticker had fired just before, flushLoop was already inside s.Sync(), which needs s.mu:
// Stop waits for flushLoop, flushLoop waits for the mutex Stop holds (issue #1428).
// Upstream fix: PR #1430 "Fix deadlock when Stop and flush race": the critical section in
// Stop only flips state and closes s.stop; waiting on s.done and the final Sync happen
// after the mutex is released, and only if the syncer was initialized and not yet stopped.
package main

import (
	"bufio"
	"fmt"
	"io"
	"sync"
	"time"
)

// WriteSyncer is an io.Writer that can also flush any buffered data.
type WriteSyncer interface {
	io.Writer
	Sync() error
}

// Clock lets tests inject tickers.
type Clock interface {
	NewTicker(time.Duration) *time.Ticker
}

type systemClock struct{}

func (systemClock) NewTicker(d time.Duration) *time.Ticker { return time.NewTicker(d) }

type discardSyncer struct{ io.Writer }

func (discardSyncer) Sync() error { return nil }

// BufferedWriteSyncer buffers writes in memory and flushes them periodically.
type BufferedWriteSyncer struct {
	WS            WriteSyncer
	Size          int
	FlushInterval time.Duration
	Clock         Clock

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
		size = 256 * 1024
	}
	flushInterval := s.FlushInterval
	if flushInterval == 0 {
		flushInterval = 30 * time.Second
	}
	if s.Clock == nil {
		s.Clock = systemClock{}
	}
	s.ticker = s.Clock.NewTicker(flushInterval)
	s.writer = bufio.NewWriterSize(s.WS, size)
	s.stop = make(chan struct{})
	s.done = make(chan struct{})
	s.initialized = true
	go s.flushLoop()
}

// Write buffers bs, flushing first if it would not fit.
func (s *BufferedWriteSyncer) Write(bs []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()

	if !s.initialized {
		s.initialize()
	}
	if len(bs) > s.writer.Available() && s.writer.Buffered() > 0 {
		if err := s.writer.Flush(); err != nil {
			return 0, err
		}
	}
	return s.writer.Write(bs)
}

// Sync flushes buffered data and syncs the underlying WriteSyncer.
func (s *BufferedWriteSyncer) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()

	var err error
	if s.initialized {
		err = s.writer.Flush()
	}
	if serr := s.WS.Sync(); err == nil {
		err = serr
	}
	return err
}

// flushLoop flushes the buffer at the configured interval until Stop.
func (s *BufferedWriteSyncer) flushLoop() {
	defer close(s.done)
	for {
		select {
		case <-s.ticker.C:
			// The ticker may fire concurrently with Stop; Sync then needs s.mu.
			_ = s.Sync()
		case <-s.stop:
			return
		}
	}
}

// Stop closes the buffer, cleans up background goroutines, and flushes remaining data.
func (s *BufferedWriteSyncer) Stop() (err error) {
	// Critical section: only flip state and signal the flush loop.
	stopped := func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()

		if !s.initialized {
			return false
		}
		if s.stopped {
			return false
		}
		s.stopped = true

		s.ticker.Stop()
		close(s.stop) // tell flushLoop to stop
		return true
	}()

	// Not initialized, or already stopped: no need for any cleanup.
	if !stopped {
		return nil
	}

	// Wait for flushLoop to end outside of the critical section, so a
	// concurrent tick can still finish its Sync.
	<-s.done

	return s.Sync()
}

func main() {
	ws := &BufferedWriteSyncer{
		WS:            discardSyncer{io.Discard},
		FlushInterval: time.Millisecond,
	}
	for i := 0; i < 100; i++ {
		fmt.Fprintf(ws, "log line %d\n", i)
	}
	time.Sleep(5 * time.Millisecond) // let the ticker fire around the time we Stop
	if err := ws.Stop(); err != nil {
		fmt.Println("stop:", err)
	}
	fmt.Println("stopped")
}
