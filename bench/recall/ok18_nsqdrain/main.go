// Package main models nsqd's Channel in-flight/deferred queue handling
// (nsqd/channel.go, processInFlightQueue): a worker loop takes the channel
// lock at the top of every turn, pops one expired message, and unlocks at the
// bottom. Early exits (empty queue, channel exiting) release the lock before
// leaving the loop, so the lock is never left held.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

type message struct {
	id       int
	deadline int64
}

type channel struct {
	mu        sync.Mutex
	name      string
	inFlight  []*message
	exiting   bool
	requeued  atomic.Int64
	onRequeue chan *message
}

func (c *channel) StartInFlight(m *message) {
	c.mu.Lock()
	c.inFlight = append(c.inFlight, m)
	c.mu.Unlock()
}

func (c *channel) Close() {
	c.mu.Lock()
	c.exiting = true
	c.mu.Unlock()
}

// processInFlightQueue requeues every message whose deadline is <= now.
// It returns whether any work was done ("dirty").
func (c *channel) processInFlightQueue(now int64) bool {
	dirty := false
	for {
		c.mu.Lock()
		if c.exiting {
			c.mu.Unlock()
			return dirty
		}
		if len(c.inFlight) == 0 {
			c.mu.Unlock()
			break
		}
		// find the first expired message
		idx := -1
		for i, m := range c.inFlight {
			if m.deadline <= now {
				idx = i
				break
			}
		}
		if idx < 0 {
			c.mu.Unlock()
			break
		}
		m := c.inFlight[idx]
		c.inFlight = append(c.inFlight[:idx], c.inFlight[idx+1:]...)
		c.mu.Unlock()

		// requeue outside the lock; the consumer may be slow
		dirty = true
		c.requeued.Add(1)
		c.onRequeue <- m
	}
	return dirty
}

func (c *channel) depth() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.inFlight)
}

func main() {
	ch := &channel{name: "archive", onRequeue: make(chan *message, 8)}

	var consumed atomic.Int64
	consumerDone := make(chan struct{})
	go func() {
		defer close(consumerDone)
		for range ch.onRequeue {
			consumed.Add(1)
		}
	}()

	var producers sync.WaitGroup
	for p := 0; p < 3; p++ {
		producers.Add(1)
		go func(p int) {
			defer producers.Done()
			for i := 0; i < 100; i++ {
				ch.StartInFlight(&message{id: p*1000 + i, deadline: int64(i % 50)})
			}
		}(p)
	}

	var scanners sync.WaitGroup
	for s := 0; s < 2; s++ {
		scanners.Add(1)
		go func() {
			defer scanners.Done()
			for now := int64(0); now < 40; now++ {
				ch.processInFlightQueue(now)
			}
		}()
	}
	producers.Wait()
	scanners.Wait()

	// final sweep for everything that has expired by t=100
	ch.processInFlightQueue(100)
	ch.Close()
	if ch.processInFlightQueue(1000) {
		panic("closed channel must not process")
	}
	close(ch.onRequeue)
	<-consumerDone

	fmt.Printf("requeued=%d consumed=%d remaining=%d\n",
		ch.requeued.Load(), consumed.Load(), ch.depth())
	if consumed.Load() != 300 || ch.depth() != 0 {
		panic("lost messages")
	}
}
