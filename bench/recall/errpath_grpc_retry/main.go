// Modelled on grpc-go's http2 client transport: a stream failure only needs
// transport-level bookkeeping (under t.mu) when it is retryable. Draining the
// transport holds t.mu and fails streams with a non-retryable Canceled status.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type code int

const (
	codeCanceled    code = 1
	codeInternal    code = 13
	codeUnavailable code = 14
)

type statusError struct {
	c   code
	msg string
}

func (e *statusError) Error() string { return fmt.Sprintf("rpc error: code=%d desc=%s", e.c, e.msg) }

var errDraining = &statusError{c: codeCanceled, msg: "transport is draining"}

func isRetryable(err error) bool {
	var se *statusError
	return errors.As(err, &se) && se.c == codeUnavailable
}

type stream struct {
	id   int
	done chan struct{}
	err  error
}

type transport struct {
	mu       sync.Mutex
	streams  map[int]*stream
	nextID   int
	retries  int
	state    string
	draining bool
}

func (t *transport) newStream() (*stream, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.draining {
		return nil, false
	}
	t.nextID++
	s := &stream{id: t.nextID, done: make(chan struct{})}
	t.streams[s.id] = s
	return s, true
}

// onStreamError does transport bookkeeping; only retryable errors reach the lock.
func (t *transport) onStreamError(err error) {
	if !isRetryable(err) {
		return
	}
	t.mu.Lock()
	t.retries++
	if t.retries%10 == 0 {
		t.state = "TRANSIENT_FAILURE"
	}
	t.mu.Unlock()
}

// finishStream is called by RPC goroutines without t.mu.
func (t *transport) finishStream(s *stream, err error) {
	t.mu.Lock()
	_, live := t.streams[s.id]
	delete(t.streams, s.id)
	t.mu.Unlock()
	if !live {
		return // already failed by drainLocked
	}
	s.err = err
	close(s.done)
	t.onStreamError(err)
}

// drainLocked must be called with t.mu held. It only ever passes errDraining
// (codeCanceled), so onStreamError returns before taking t.mu.
func (t *transport) drainLocked() int {
	n := 0
	for id, s := range t.streams {
		s.err = errDraining
		close(s.done)
		t.onStreamError(errDraining)
		delete(t.streams, id)
		n++
	}
	return n
}

func (t *transport) GracefulClose() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.draining = true
	t.state = "CLOSING"
	return t.drainLocked()
}

func main() {
	t := &transport{streams: map[int]*stream{}, state: "READY"}
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1) // each RPC goroutine opens up to 200 streams
		go func(g int) {
			defer wg.Done()
			for i := 0; ; i++ {
				s, ok := t.newStream()
				if !ok {
					return
				}
				if i%4 == 3 { // leave this one open: drained by GracefulClose
					<-s.done
					continue
				}
				var err error
				switch (g + i) % 5 {
				case 1:
					err = &statusError{c: codeUnavailable, msg: "connection reset"}
				case 2:
					err = &statusError{c: codeInternal, msg: "bad frame"}
				}
				if t.finishStream(s, err); i == 200 {
					return
				}
			}
		}(g)
	}
	drained := 0
	for i := 0; i < 30; i++ {
		time.Sleep(time.Millisecond) // let some streams pile up, then drain them
		drained += func() int { t.mu.Lock(); defer t.mu.Unlock(); return t.drainLocked() }()
	}
	drained += t.GracefulClose()
	wg.Wait()
	t.mu.Lock()
	fmt.Printf("drained=%d retries=%d state=%s\n", drained, t.retries, t.state)
	t.mu.Unlock()
}
