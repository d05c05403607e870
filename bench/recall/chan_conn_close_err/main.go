// Pattern: nats.go / net/http transport style connection teardown. The
// connection records its terminal error exactly once: closeWithError takes
// c.mu, checks the `closed` status, flips it, and reports the error on a
// one-shot channel of capacity 1 (like persistConn's writeErrCh / nats'
// close-callback dispatch). A supervisor goroutine waits for that error and
// then inspects connection state under c.mu.
//
// Why it is safe: the `closed` flag, read and written only under c.mu,
// guarantees at most one send on closeErr, whose capacity is 1, so the send
// performed with c.mu held can never block.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type conn struct {
	mu       sync.Mutex
	closed   bool
	inFlight int
	written  int
	closeErr chan error
}

func newConn() *conn {
	return &conn{closeErr: make(chan error, 1)}
}

func (c *conn) write(n int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errors.New("write on closed connection")
	}
	c.written += n
	return nil
}

// closeWithError may be called concurrently from the read loop, the write
// loop and user code; only the first caller reports.
func (c *conn) closeWithError(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	c.closeErr <- err
}

func main() {
	c := newConn()
	supervised := make(chan struct{})

	// Supervisor: waits for the terminal error, then reads state under c.mu.
	go func() {
		defer close(supervised)
		err := <-c.closeErr
		c.mu.Lock()
		fmt.Printf("connection closed: %v (written=%d inFlight=%d)\n", err, c.written, c.inFlight)
		c.mu.Unlock()
	}()

	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			for j := 0; j < 5; j++ {
				if err := c.write(id + j); err != nil {
					break
				}
				time.Sleep(time.Millisecond)
			}
			// Every loop races to close; exactly one wins.
			c.closeWithError(fmt.Errorf("loop %d: EOF", id))
		}(i)
	}
	wg.Wait()
	c.closeWithError(errors.New("user close"))
	<-supervised
}
