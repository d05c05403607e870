// Modelled on moby/docker daemon/logger/awslogs (collectBatch / publishBatch)
// and logger.Copier: producers append log lines to a buffer under l.mu; a
// single flusher goroutine loops on a ticker / flush request, swaps the buffer
// out under the lock, releases it, and then pushes the batch to the sink,
// whose PutLogEvents takes the sink's own mutex. Close does a final drain.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

var errClosed = errors.New("awslogs: logger is closed")

type message struct {
	line string
	ts   time.Time
}

type sink struct {
	mu      sync.Mutex
	batches int
	events  int
}

func (s *sink) PutLogEvents(batch []message) {
	s.mu.Lock()
	s.batches++
	s.events += len(batch)
	s.mu.Unlock()
}

type batchLogger struct {
	mu       sync.Mutex
	buf      []message
	closed   bool
	maxBatch int
	sink     *sink
	flushReq chan struct{}
	stop     chan struct{}
	done     chan struct{}
}

func newBatchLogger(s *sink, max int, every time.Duration) *batchLogger {
	l := &batchLogger{maxBatch: max, sink: s, flushReq: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{})}
	go l.collectBatch(every)
	return l
}

func (l *batchLogger) Log(line string) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return errClosed
	}
	l.buf = append(l.buf, message{line: line, ts: time.Now()})
	full := len(l.buf) >= l.maxBatch
	l.mu.Unlock()
	if full {
		select {
		case l.flushReq <- struct{}{}:
		default:
		}
	}
	return nil
}

func (l *batchLogger) collectBatch(every time.Duration) {
	defer close(l.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-l.flushReq:
		case <-l.stop:
			l.flush()
			return
		}
		l.flush()
	}
}

// flush detaches the buffer under the lock and publishes outside it.
func (l *batchLogger) flush() {
	l.mu.Lock()
	batch := l.buf
	l.buf = nil
	l.mu.Unlock()
	for len(batch) > 0 {
		n := min(len(batch), l.maxBatch)
		l.sink.PutLogEvents(batch[:n])
		batch = batch[n:]
	}
}

func (l *batchLogger) Close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	l.mu.Unlock()
	close(l.stop)
	<-l.done
}

func main() {
	s := &sink{}
	l := newBatchLogger(s, 8, 2*time.Millisecond)
	var wg sync.WaitGroup
	for c := 0; c < 2; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := 0; i < 30; i++ {
				_ = l.Log(fmt.Sprintf("container-%d line %d", c, i))
			}
		}(c)
	}
	wg.Wait()
	l.Close()
	fmt.Println("late log:", l.Log("after close"))
	s.mu.Lock()
	fmt.Println("batches", s.batches, "events", s.events)
	s.mu.Unlock()
}
