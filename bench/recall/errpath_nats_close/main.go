// Modelled on nats.go: processOpErr handles flush/read errors by switching to
// RECONNECTING under nc.mu, but is a no-op once the connection is CLOSED.
// Close holds nc.mu, marks the conn CLOSED, flushes, and passes the flush
// error to processOpErr, which therefore returns before locking.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

const (
	CONNECTED int32 = iota
	RECONNECTING
	CLOSED
)

type flakyConn struct{ n atomic.Int64 }

func (f *flakyConn) Write(p []byte) (int, error) {
	if f.n.Add(1)%4 == 0 {
		return 0, io.ErrShortWrite
	}
	return len(p), nil
}

type Conn struct {
	mu         sync.Mutex
	status     atomic.Int32 // written only with mu held; CLOSED is terminal
	bw         *bufio.Writer
	reconnects int
	lastErr    error
}

func (nc *Conn) isClosed() bool { return nc.status.Load() == CLOSED }

// processOpErr only takes nc.mu when err != nil and the conn is not closed.
func (nc *Conn) processOpErr(err error) {
	if err != nil {
		if nc.isClosed() {
			return
		}
		nc.mu.Lock()
		if nc.isClosed() { // re-check: Close may have won the race
			nc.mu.Unlock()
			return
		}
		nc.status.Store(RECONNECTING)
		nc.lastErr = err
		nc.reconnects++
		nc.bw = bufio.NewWriterSize(&flakyConn{}, 32) // "reconnect"
		nc.status.Store(CONNECTED)
		nc.mu.Unlock()
	}
}

func (nc *Conn) Publish(subj string, data []byte) error {
	nc.mu.Lock()
	if nc.isClosed() {
		nc.mu.Unlock()
		return errors.New("nats: connection closed")
	}
	fmt.Fprintf(nc.bw, "PUB %s %d\r\n%s\r\n", subj, len(data), data)
	nc.mu.Unlock()
	return nil
}

// flush is used by the flusher goroutine; the lock is released before
// processOpErr runs.
func (nc *Conn) flush() {
	nc.mu.Lock()
	if nc.isClosed() {
		nc.mu.Unlock()
		return
	}
	err := nc.bw.Flush()
	nc.mu.Unlock()
	nc.processOpErr(err)
}

// Close holds nc.mu across processOpErr; status is already CLOSED (set above,
// under the same lock, and never reset), so processOpErr is a no-op.
func (nc *Conn) Close() {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	if nc.isClosed() {
		return
	}
	nc.status.Store(CLOSED)
	err := nc.bw.Flush()
	nc.processOpErr(err)
}

func main() {
	nc := &Conn{bw: bufio.NewWriterSize(&flakyConn{}, 32)}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	flusherDone := make(chan struct{})
	go func() {
		defer close(flusherDone)
		for {
			select {
			case <-stop:
				return
			default:
				nc.flush()
			}
		}
	}()
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				if nc.Publish(fmt.Sprintf("orders.%d", g), []byte("payload")) != nil {
					return
				}
			}
		}(g)
	}
	wg.Wait()
	nc.Close()
	close(stop)
	<-flusherDone
	nc.mu.Lock()
	fmt.Printf("reconnects=%d lastErr=%v closed=%v\n", nc.reconnects, nc.lastErr, nc.isClosed())
	nc.mu.Unlock()
}
