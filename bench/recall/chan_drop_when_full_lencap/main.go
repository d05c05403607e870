// Pattern: moby/moby daemon/logger "mode=non-blocking": a container must
// never be blocked by a slow log driver, so messages are dropped when the
// buffer is full. Here the buffer is a channel of constant capacity; Log
// checks len(ch) < cap(ch) and sends, both under l.mu, which every sender
// holds. The shipper goroutine receives messages and updates the shared
// counters under l.mu.
//
// Why it is safe: all sends happen under l.mu, so between the len/cap check
// and the send no other sender can add an element; receivers can only make
// the buffer shorter. The guarded send therefore always has a free slot.
package main

import (
	"fmt"
	"sync"
	"time"
)

const logBufferSize = 8

type logMessage struct {
	source string
	line   string
}

type nonBlockingLogger struct {
	mu      sync.Mutex
	buf     chan logMessage
	dropped int
	shipped int
	closed  bool
}

func (l *nonBlockingLogger) Log(m logMessage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	if len(l.buf) < cap(l.buf) {
		l.buf <- m
		return
	}
	l.dropped++
}

func (l *nonBlockingLogger) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	close(l.buf)
}

func (l *nonBlockingLogger) ship(done chan<- struct{}) {
	defer close(done)
	for m := range l.buf {
		time.Sleep(50 * time.Microsecond) // slow remote driver
		_ = m
		l.mu.Lock()
		l.shipped++
		l.mu.Unlock()
	}
}

func main() {
	l := &nonBlockingLogger{buf: make(chan logMessage, logBufferSize)}
	done := make(chan struct{})
	go l.ship(done)

	var wg sync.WaitGroup
	for _, src := range []string{"stdout", "stderr"} {
		wg.Add(1)
		go func(src string) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				l.Log(logMessage{source: src, line: fmt.Sprintf("line %d", i)})
			}
		}(src)
	}
	wg.Wait()
	l.Close()
	<-done

	l.mu.Lock()
	fmt.Printf("shipped=%d dropped=%d total=%d\n", l.shipped, l.dropped, l.shipped+l.dropped)
	l.mu.Unlock()
}
