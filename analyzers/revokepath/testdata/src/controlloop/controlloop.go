// Package controlloop: the control goroutine locks, drains and commits;
// a revoke callback (registered with an API confinelint treats as
// synchronous) locks and commits without draining.
package controlloop

import (
	"sync"

	"broker"
)

type completion struct {
	partition int32
	offset    int64
}

type Consumer struct {
	client  *broker.Client
	mu      sync.Mutex
	mailbox chan completion
	done    map[int32]int64 //confined:control
}

// New starts the consumer.
func New(client *broker.Client, stop <-chan struct{}) *Consumer {
	c := &Consumer{client: client, mailbox: make(chan completion, 16), done: map[int32]int64{}}
	client.OnRevoked(c.onRevoked)
	go c.run(stop)
	return c
}

//confined:entry
func (c *Consumer) run(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case done := <-c.mailbox:
			c.done[done.partition] = done.offset
		}
		c.mu.Lock()
		c.drain()
		c.commit() // correct: drained after the lock
		c.mu.Unlock()
	}
}

// drain applies every completion waiting in the mailbox.
//
//confined:drain
func (c *Consumer) drain() {
	for {
		select {
		case done := <-c.mailbox:
			c.done[done.partition] = done.offset
		default:
			return
		}
	}
}

// commit publishes the drained offsets.
//
//confined:commit
//confined:requires mu
func (c *Consumer) commit() {
	c.client.CommitOffsets(c.done)
}

// onRevoked commits what the control goroutine has drained so far, missing
// the completions still in the mailbox.
func (c *Consumer) onRevoked(partitions []int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.commit() // want `commit Consumer\.commit \(publishes control progress\) can run without a drain of control's mailbox after Consumer\.mu is taken: Consumer\.onRevoked -> Consumer\.commit \[commit-without-drain\]`
}
