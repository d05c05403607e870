// Like golang.org/x/net/http2 ClientConn idle timer: time.AfterFunc runs
// onIdleTimeout, which takes cc.mu. RoundTrip stops the timer while holding
// cc.mu - Timer.Stop never waits for the callback, so this cannot deadlock;
// the callback re-checks state because Stop may lose the race.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

var errClosed = errors.New("http2: client conn closed")

type ClientConn struct {
	idleTimeout time.Duration

	mu        sync.Mutex
	idleTimer *time.Timer
	streams   int
	completed int
	closed    bool
	closedCh  chan struct{}
}

func newClientConn(idle time.Duration) *ClientConn {
	cc := &ClientConn{idleTimeout: idle, closedCh: make(chan struct{})}
	cc.mu.Lock()
	cc.idleTimer = time.AfterFunc(idle, cc.onIdleTimeout)
	cc.mu.Unlock()
	return cc
}

func (cc *ClientConn) onIdleTimeout() {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.closed || cc.streams > 0 {
		return // lost the race with RoundTrip; it will re-arm when idle
	}
	cc.closed = true
	close(cc.closedCh)
}

func (cc *ClientConn) RoundTrip(work time.Duration) error {
	cc.mu.Lock()
	if cc.closed {
		cc.mu.Unlock()
		return errClosed
	}
	cc.streams++
	cc.idleTimer.Stop() // non-blocking even though callback takes cc.mu
	cc.mu.Unlock()

	time.Sleep(work)

	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.streams--
	cc.completed++
	if cc.streams == 0 {
		cc.idleTimer.Reset(cc.idleTimeout)
	}
	return nil
}

func main() {
	cc := newClientConn(20 * time.Millisecond)
	var wg sync.WaitGroup
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				if err := cc.RoundTrip(time.Duration(i*j%3) * time.Millisecond); err != nil {
					return
				}
			}
		}(i)
	}
	wg.Wait()
	select {
	case <-cc.closedCh:
	case <-time.After(2 * time.Second):
		panic("idle timer never fired")
	}
	cc.mu.Lock()
	fmt.Println("completed:", cc.completed, "closed:", cc.closed)
	cc.mu.Unlock()
}
