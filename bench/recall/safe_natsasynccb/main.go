// Modelled on nats.go's async callback handler: connection-state changes
// are made under nc.mu, and the user's DisconnectedErrCB / ReconnectedCB /
// ClosedCB are queued (as func values) to a dispatcher goroutine while nc.mu
// is still held, preserving event order. The dispatcher runs callbacks
// without any lock, and the callbacks only take the application's own
// statsMu -- never nc.mu -- so the dispatcher always keeps draining.
package main

import (
	"fmt"
	"sync"
)

type Options struct {
	AsyncCallbackQueueLen int
	DisconnectedCB        func(url string)
	ReconnectedCB         func(url string)
	ClosedCB              func()
}

type Status int

const (
	CONNECTED Status = iota
	RECONNECTING
	CLOSED
)

type Conn struct {
	mu     sync.Mutex
	status Status
	url    string
	opts   Options

	ach     chan func()
	achDone chan struct{}
}

func Connect(url string, opts Options) *Conn {
	nc := &Conn{url: url, opts: opts, ach: make(chan func(), opts.AsyncCallbackQueueLen), achDone: make(chan struct{})}
	go nc.asyncDispatch()
	return nc
}

func (nc *Conn) asyncDispatch() {
	defer close(nc.achDone)
	for f := range nc.ach {
		f()
	}
}

// processDisconnect/processReconnect push callbacks while holding nc.mu.
func (nc *Conn) flap(newURL string) {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	if nc.status == CLOSED {
		return
	}
	old := nc.url
	nc.status = RECONNECTING
	if cb := nc.opts.DisconnectedCB; cb != nil {
		nc.ach <- func() { cb(old) }
	}
	nc.url, nc.status = newURL, CONNECTED
	if cb := nc.opts.ReconnectedCB; cb != nil {
		nc.ach <- func() { cb(newURL) }
	}
}

func (nc *Conn) Status() Status {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	return nc.status
}

func (nc *Conn) Close() {
	nc.mu.Lock()
	if nc.status == CLOSED {
		nc.mu.Unlock()
		return
	}
	nc.status = CLOSED
	if cb := nc.opts.ClosedCB; cb != nil {
		nc.ach <- cb
	}
	close(nc.ach)
	nc.mu.Unlock()
	<-nc.achDone // wait for callbacks, without nc.mu
}

func main() {
	var statsMu sync.Mutex
	var disconnects, reconnects int
	closed := false
	opts := Options{
		AsyncCallbackQueueLen: 2,
		DisconnectedCB:        func(string) { statsMu.Lock(); disconnects++; statsMu.Unlock() },
		ReconnectedCB:         func(string) { statsMu.Lock(); reconnects++; statsMu.Unlock() },
		ClosedCB:              func() { statsMu.Lock(); closed = true; statsMu.Unlock() },
	}
	nc := Connect("nats://a:4222", opts)

	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				nc.flap(fmt.Sprintf("nats://s%d:4222", (g+i)%3))
				_ = nc.Status()
			}
		}(g)
	}
	wg.Wait()
	nc.Close()
	statsMu.Lock()
	fmt.Printf("disconnects=%d reconnects=%d closed=%v\n", disconnects, reconnects, closed)
	statsMu.Unlock()
}
