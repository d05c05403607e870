// Package obliga exports helpers that commit without draining: the
// obligation to drain travels to importers as a fact.
package obliga

import "sync"

type Consumer struct {
	Mu      sync.Mutex
	mailbox chan int64
	offset  int64 //confined:control
}

// Drain applies the completions waiting in the mailbox.
//
//confined:drain
func (c *Consumer) Drain() {
	for {
		select {
		case off := <-c.mailbox:
			c.offset = off
		default:
			return
		}
	}
}

// CommitLocked commits; the caller holds Mu and has drained since taking it.
func (c *Consumer) CommitLocked() {
	c.commit()
}

// Publish publishes; the caller has drained.
func (c *Consumer) Publish() {
	c.publish()
}

// Flush locks, drains and commits: nothing left for callers.
func (c *Consumer) Flush() {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	c.Drain()
	c.commit()
}

//confined:commit
//confined:requires Mu
func (c *Consumer) commit() {}

//confined:commit
func (c *Consumer) publish() {}
