package main

import (
	"fmt"
	"sync"
	"time"
)

// refresher periodically invokes a callback. Its stop channel has room
// for one message and Stop never blocks, so it is safe to call it from
// any context, including while holding locks the callback takes.
type refresher struct {
	every time.Duration
	stop  chan struct{}
	done  chan struct{}
}

func newRefresher(every time.Duration) *refresher {
	return &refresher{every: every, stop: make(chan struct{}, 1), done: make(chan struct{})}
}

func (r *refresher) Start(f func()) { go r.run(f) }

func (r *refresher) run(f func()) {
	defer close(r.done)
	t := time.NewTimer(r.every)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			f()
			t.Reset(r.every)
		}
	}
}

// Stop requests termination without waiting.
func (r *refresher) Stop() {
	select {
	case r.stop <- struct{}{}:
	default: // a stop request is already pending
	}
}

// Done is closed once run has returned.
func (r *refresher) Done() <-chan struct{} { return r.done }

type tokenSource struct {
	mu       sync.Mutex
	token    string
	gen      int
	shutdown bool
	ref      *refresher
}

func newTokenSource() *tokenSource {
	ts := &tokenSource{token: "tok-0"}
	ts.ref = newRefresher(time.Millisecond)
	ts.ref.Start(ts.refresh)
	return ts
}

func (ts *tokenSource) refresh() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.shutdown {
		return
	}
	ts.gen++
	ts.token = fmt.Sprintf("tok-%d", ts.gen)
}

func (ts *tokenSource) Token() string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.token
}

// Shutdown stops the refresher while holding ts.mu: the send cannot block
// because the channel is buffered and guarded by select/default. Waiting
// for the goroutine to exit happens only after the lock is released.
func (ts *tokenSource) Shutdown() {
	ts.mu.Lock()
	ts.shutdown = true
	ts.ref.Stop()
	ts.ref.Stop()
	done := ts.ref.Done()
	ts.mu.Unlock()
	<-done
}

func main() {
	ts := newTokenSource()
	seen := map[string]bool{}
	for i := 0; i < 10; i++ {
		seen[ts.Token()] = true
		time.Sleep(time.Millisecond)
	}
	ts.Shutdown()
	fmt.Println("final:", ts.Token(), "distinct seen >0:", len(seen) > 0)
}
