// Pattern: grpc-go internal/transport controlBuffer + loopyWriter. Writers
// append frames to a list under c.mu and wake the writer loop through
// `wakeupCh: make(chan struct{}, 1)`, gated by a flag so at most one wakeup
// is ever outstanding. (grpc uses consumerWaiting and a non-blocking send;
// here the flag-gated send is a plain send made with the lock held.)
//
// Why it is safe: invariant (under c.mu): kickPending == false implies the
// wakeup buffer is empty. A send happens only when kickPending is false and
// sets it true; the loop clears it under c.mu only after it has received the
// token. So every send finds an empty 1-slot buffer and never blocks.
package main

import (
	"fmt"
	"sync"
	"time"
)

const wakeupBuf = 1

type frame struct {
	stream int
	data   string
}

type controlBuffer struct {
	mu          sync.Mutex
	list        []frame
	kickPending bool
	closed      bool
	wakeupCh    chan struct{}
}

func (c *controlBuffer) put(f frame) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.list = append(c.list, f)
	if !c.kickPending {
		c.kickPending = true
		c.wakeupCh <- struct{}{} // buffer provably empty here
	}
	return true
}

func (c *controlBuffer) finish() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	close(c.wakeupCh)
}

// loopyWriter drains the list each time it is woken.
func (c *controlBuffer) loopyWriter(done chan<- struct{}) {
	defer close(done)
	written := 0
	for range c.wakeupCh {
		c.mu.Lock()
		c.kickPending = false
		batch := c.list
		c.list = nil
		c.mu.Unlock()
		for range batch {
			written++ // pretend to write to the wire
		}
		time.Sleep(200 * time.Microsecond)
	}
	c.mu.Lock()
	written += len(c.list) // anything appended after the last wakeup
	c.list = nil
	c.mu.Unlock()
	fmt.Printf("loopy writer flushed %d frames\n", written)
}

func main() {
	c := &controlBuffer{wakeupCh: make(chan struct{}, wakeupBuf)}
	done := make(chan struct{})
	go c.loopyWriter(done)

	var wg sync.WaitGroup
	for s := 1; s <= 5; s++ {
		wg.Add(1)
		go func(stream int) {
			defer wg.Done()
			for i := 0; i < 30; i++ {
				c.put(frame{stream: stream, data: fmt.Sprintf("DATA %d", i)})
			}
		}(s)
	}
	wg.Wait()
	c.finish()
	<-done
}
