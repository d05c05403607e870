// Pattern A. Modelled on a NATS/gRPC-transport-style connection writer: the
// done channel is closed only inside Close while holding mu, together with
// closed=true. Write checks closed first under mu, so the later select can
// never observe done closed and never reaches the self-locking Close.
package main

import (
	"errors"
	"fmt"
	"sync"
)

var errClosed = errors.New("conn closed")

type conn struct {
	mu     sync.Mutex
	closed bool
	done   chan struct{}
	buf    []byte
	writes int
}

func newConn() *conn { return &conn{done: make(chan struct{})} }

// Close locks c.mu on every path and is idempotent.
func (c *conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errClosed
	}
	c.closed = true
	close(c.done)
	c.buf = nil
	return nil
}

func (c *conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, errClosed
	}
	// done is only closed under mu after closed=true, so it is open here.
	select {
	case <-c.done:
		c.Close()
		return 0, errClosed
	default:
	}
	c.buf = append(c.buf, p...)
	c.writes++
	if len(c.buf) > 256 {
		c.buf = c.buf[:0] // "flush"
	}
	return len(p), nil
}

func main() {
	conns := []*conn{newConn(), newConn(), newConn()}
	var wg sync.WaitGroup
	var emu sync.Mutex
	errs := 0
	for _, c := range conns {
		for g := 0; g < 3; g++ {
			wg.Add(1)
			go func(c *conn) {
				defer wg.Done()
				for i := 0; i < 300; i++ {
					if _, err := c.Write([]byte("hello")); err != nil {
						emu.Lock()
						errs++
						emu.Unlock()
						return
					}
				}
			}(c)
		}
		wg.Add(1)
		go func(c *conn) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				c.mu.Lock()
				n := c.writes
				c.mu.Unlock()
				if n > 200 {
					break
				}
			}
			c.Close()
		}(c)
	}
	wg.Wait()
	for _, c := range conns {
		<-c.done
		if c.Close() != errClosed {
			panic("double close not detected")
		}
	}
	fmt.Println("writer errors after close:", errs)
}
