// Modelled on jaeger-client-go's remoteReporter (reporter.go): Flush holds
// the reporter's flush mutex while it enqueues a flush command and blocks on
// the ack channel. The background processor never takes that mutex; it
// buffers spans under its own bufMu and counts with atomics.

package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

type Span struct {
	TraceID uint64
	Op      string
}

type cmdKind int

const (
	cmdAppend cmdKind = iota
	cmdFlush
)

type reporterCmd struct {
	kind cmdKind
	span Span
	ack  chan int
}

type remoteReporter struct {
	queue chan reporterCmd

	flushMu sync.Mutex // serialises explicit Flush calls
	flushes int

	bufMu  sync.Mutex
	buffer []Span

	sent atomic.Int64
	done chan struct{}
}

func newRemoteReporter(queueSize int) *remoteReporter {
	r := &remoteReporter{queue: make(chan reporterCmd, queueSize), done: make(chan struct{})}
	go r.processQueue()
	return r
}

func (r *remoteReporter) Report(s Span) {
	r.queue <- reporterCmd{kind: cmdAppend, span: s}
}

// Flush blocks until the processor has sent everything queued before it.
func (r *remoteReporter) Flush() int {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	ack := make(chan int, 1)
	r.queue <- reporterCmd{kind: cmdFlush, ack: ack}
	n := <-ack
	r.flushes++
	return n
}

func (r *remoteReporter) sendBuffered() int {
	r.bufMu.Lock()
	batch := r.buffer
	r.buffer = nil
	r.bufMu.Unlock()
	r.sent.Add(int64(len(batch)))
	return len(batch)
}

func (r *remoteReporter) processQueue() {
	defer close(r.done)
	for cmd := range r.queue {
		switch cmd.kind {
		case cmdAppend:
			r.bufMu.Lock()
			r.buffer = append(r.buffer, cmd.span)
			full := len(r.buffer) >= 16
			r.bufMu.Unlock()
			if full {
				r.sendBuffered()
			}
		case cmdFlush:
			cmd.ack <- r.sendBuffered()
		}
	}
	r.sendBuffered()
}

// Close must be called after all Report and Flush callers have returned.
func (r *remoteReporter) Close() {
	close(r.queue)
	<-r.done
}

func main() {
	r := newRemoteReporter(8)
	var wg sync.WaitGroup
	for t := 0; t < 4; t++ {
		wg.Add(1)
		go func(t int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				r.Report(Span{TraceID: uint64(t<<16 | i), Op: "HTTP GET /api"})
				if i%10 == 9 {
					r.Flush()
				}
			}
		}(t)
	}
	wg.Add(1)
	go func() { // periodic flush ticker
		defer wg.Done()
		for i := 0; i < 10; i++ {
			r.Flush()
		}
	}()
	wg.Wait()
	r.Close()

	r.flushMu.Lock()
	flushes := r.flushes
	r.flushMu.Unlock()
	fmt.Printf("sent=%d flushes=%d\n", r.sent.Load(), flushes)
	if r.sent.Load() != 200 {
		panic("spans lost")
	}
}
