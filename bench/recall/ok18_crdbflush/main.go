// Package main models the WAL LogWriter used by CockroachDB's storage engine
// (pebble's record/log_writer.go): a committer appends a record under w.mu and
// then, still "holding" the lock from its own point of view, calls
// waitForFlushLocked, which drops w.mu, blocks until the flusher goroutine
// closes the flush-done channel, and re-acquires w.mu before returning. The
// flusher needs w.mu to swap out the pending batch, which is possible exactly
// because the waiter released it.
package main

import (
	"fmt"
	"sync"
)

type logWriter struct {
	mu        sync.Mutex
	pending   [][]byte
	flushDone chan struct{} // closed when the current pending batch is durable
	flushReq  chan struct{} // capacity 1
	stop      chan struct{}
	stopped   chan struct{}

	// only touched by the flusher goroutine
	written int
	batches int
	// guarded by mu
	synced int
}

func newLogWriter() *logWriter {
	w := &logWriter{
		flushDone: make(chan struct{}),
		flushReq:  make(chan struct{}, 1),
		stop:      make(chan struct{}),
		stopped:   make(chan struct{}),
	}
	go w.flushLoop()
	return w
}

func (w *logWriter) requestFlushLocked() {
	select {
	case w.flushReq <- struct{}{}:
	default: // a flush is already requested and will see our record
	}
}

// waitForFlushLocked must be called with w.mu held; it returns with w.mu held.
func (w *logWriter) waitForFlushLocked() {
	ch := w.flushDone
	w.mu.Unlock()
	<-ch
	w.mu.Lock()
}

func (w *logWriter) SyncRecord(rec []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending = append(w.pending, rec)
	w.requestFlushLocked()
	w.waitForFlushLocked()
	w.synced++
}

func (w *logWriter) flushLoop() {
	defer close(w.stopped)
	for {
		select {
		case <-w.flushReq:
		case <-w.stop:
			return
		}
		w.mu.Lock()
		batch := w.pending
		done := w.flushDone
		w.pending = nil
		w.flushDone = make(chan struct{})
		w.mu.Unlock()

		for _, rec := range batch {
			w.written += len(rec) // stands in for write+fsync
		}
		w.batches++
		close(done)
	}
}

func (w *logWriter) Close() (written, batches, synced int) {
	close(w.stop)
	<-w.stopped
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.written, w.batches, w.synced
}

func main() {
	w := newLogWriter()
	const committers, perCommitter = 8, 200
	var wg sync.WaitGroup
	for c := 0; c < committers; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := 0; i < perCommitter; i++ {
				w.SyncRecord([]byte(fmt.Sprintf("batch c%d seq=%04d", c, i)))
			}
		}(c)
	}
	wg.Wait()
	written, batches, synced := w.Close()
	fmt.Printf("synced=%d bytes=%d fsyncs=%d\n", synced, written, batches)
	if synced != committers*perCommitter {
		panic("lost commits")
	}
}
