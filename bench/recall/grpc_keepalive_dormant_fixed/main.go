// grpc-go transport/http2_client.go: with keepalive on and
// PermitWithoutStream=false, the keepalive goroutine goes dormant when there
// are no active streams by draining awakenKeepalive while holding t.mu.
// NewStream wakes it with a non-blocking send on awakenKeepalive but does not
// refill the channel, so the second time keepalive goes dormant it blocks on
// the receive with t.mu held, and every NewStream/Close hangs on t.mu.
// grpc/grpc-go#1459, fixed in grpc/grpc-go#1460.
// Fixed twin: after waking keepalive, NewStream refills awakenKeepalive.
package main

import (
	"fmt"
	"sync"
	"time"
)

type ClientParameters struct {
	Time                time.Duration
	PermitWithoutStream bool
}

type http2Client struct {
	mu              sync.Mutex
	activeStreams   map[uint32]struct{}
	nextID          uint32
	pingsSent       int
	closed          bool
	kp              ClientParameters
	awakenKeepalive chan struct{}
	shutdownChan    chan struct{}
}

func newHTTP2Client(kp ClientParameters) *http2Client {
	t := &http2Client{
		activeStreams:   make(map[uint32]struct{}),
		nextID:          1,
		kp:              kp,
		awakenKeepalive: make(chan struct{}, 1),
		shutdownChan:    make(chan struct{}),
	}
	// Make awakenKeepalive non-writable; keepalive() drains it when dormant.
	t.awakenKeepalive <- struct{}{}
	go t.keepalive()
	return t
}

func (t *http2Client) NewStream() uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	id := t.nextID
	t.nextID += 2
	t.activeStreams[id] = struct{}{}
	// If the number of active streams changes from 0 to 1, wake up a dormant keepalive.
	if len(t.activeStreams) == 1 {
		select {
		case t.awakenKeepalive <- struct{}{}:
			t.pingsSent++ // framer.writePing
			// Refill: keep awakenKeepalive non-writable unless keepalive is dormant.
			t.awakenKeepalive <- struct{}{}
		default:
		}
	}
	return id
}

func (t *http2Client) CloseStream(id uint32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.activeStreams, id)
}

func (t *http2Client) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.closed = true
		close(t.shutdownChan)
	}
}

func (t *http2Client) keepalive() {
	timer := time.NewTimer(t.kp.Time)
	for {
		select {
		case <-timer.C:
			t.mu.Lock()
			if len(t.activeStreams) < 1 && !t.kp.PermitWithoutStream {
				// Make awakenKeepalive writable.
				<-t.awakenKeepalive
				t.mu.Unlock()
				select {
				case <-t.awakenKeepalive:
					// A stream was created and a ping was sent; restart the timer.
				case <-t.shutdownChan:
					return
				}
			} else {
				t.pingsSent++
				t.mu.Unlock()
			}
			timer.Reset(t.kp.Time)
		case <-t.shutdownChan:
			timer.Stop()
			return
		}
	}
}

func main() {
	t := newHTTP2Client(ClientParameters{Time: 10 * time.Millisecond})
	// Unary RPCs separated by idle periods longer than the keepalive time.
	for i := 0; i < 3; i++ {
		time.Sleep(40 * time.Millisecond)
		id := t.NewStream()
		time.Sleep(5 * time.Millisecond)
		t.CloseStream(id)
		fmt.Println("rpc", i, "done on stream", id)
	}
	t.Close()
}
