// Pattern: a method that must be called with c.mu held may release c.mu
// around a blocking network write and re-acquire it before returning.
// Modelled on nats-server's client.flushOutbound, which sets c.flags
// "flushOutbound", drops c.mu for the write, and re-locks afterwards.
package main

import (
	"bytes"
	"fmt"
	"sync"
	"time"
)

// slowConn is written only by the goroutine that owns the "flushing" token.
type slowConn struct{ buf bytes.Buffer }

func (s *slowConn) Write(bufs [][]byte) int {
	time.Sleep(20 * time.Microsecond)
	n := 0
	for _, b := range bufs {
		w, _ := s.buf.Write(b)
		n += w
	}
	return n
}

type client struct {
	mu       sync.Mutex
	out      [][]byte
	flushing bool // set while some goroutine writes with c.mu released
	bytesOut int
	conn     slowConn
}

const flushThreshold = 8

// flushOutbound: c.mu must be held; it is held again on return.
// Returns true if it wrote something.
func (c *client) flushOutbound() bool {
	if c.flushing || len(c.out) == 0 {
		return false // lock never released on this path
	}
	c.flushing = true
	bufs := c.out
	c.out = nil
	c.mu.Unlock()
	n := c.conn.Write(bufs)
	c.mu.Lock()
	c.flushing = false
	c.bytesOut += n
	return true
}

// queueOutbound: c.mu must be held.
func (c *client) queueOutbound(msg []byte) {
	c.out = append(c.out, msg)
	if len(c.out) >= flushThreshold {
		c.flushOutbound()
	}
}

func (c *client) Publish(subj string, payload []byte) {
	c.mu.Lock()
	c.queueOutbound([]byte("MSG " + subj + " " + string(payload) + "\r\n"))
	c.mu.Unlock()
}

func (c *client) flushLoop(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	for {
		select {
		case <-stop:
			return
		case <-time.After(200 * time.Microsecond):
			c.mu.Lock()
			for c.flushOutbound() {
			}
			c.mu.Unlock()
		}
	}
}

func main() {
	c := &client{}
	stop, done := make(chan struct{}), make(chan struct{})
	go c.flushLoop(stop, done)

	var wg sync.WaitGroup
	for p := 0; p < 4; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				c.Publish(fmt.Sprintf("foo.%d", p), []byte("x"))
			}
		}(p)
	}
	wg.Wait()
	close(stop)
	<-done
	// Final drain: no other goroutine is flushing any more.
	c.mu.Lock()
	for c.flushOutbound() {
	}
	total := c.bytesOut
	c.mu.Unlock()
	fmt.Println("bytes out:", total)
}
