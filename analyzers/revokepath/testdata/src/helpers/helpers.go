// Package helpers: a commit helper that expects its caller to have locked
// and drained passes the obligation up to each caller.
package helpers

import "sync"

type Consumer struct {
	mu      sync.Mutex
	mailbox chan int64
	offset  int64 //confined:control
}

//confined:entry
func (c *Consumer) run(tick, flush <-chan struct{}) {
	for {
		select {
		case <-tick:
			c.mu.Lock()
			c.drain()
			c.commitLocked() // correct: locked, then drained
			c.mu.Unlock()
		case <-flush:
			c.mu.Lock()
			c.commitLocked() // want `commit Consumer\.commit \(publishes control progress\) can run without a drain of control's mailbox after Consumer\.mu is taken: Consumer\.run -> Consumer\.commitLocked -> Consumer\.commit \[commit-without-drain\]`
			c.mu.Unlock()
		}
		c.lockedFlush()
	}
}

// lockedFlush takes the lock and drains through helpers.
func (c *Consumer) lockedFlush() {
	c.lockAndDrain()
	c.twoHops()
}

func (c *Consumer) lockAndDrain() {
	c.mu.Lock()
	c.drain()
}

// twoHops passes the obligation through one more helper; lockedFlush
// discharges it.
func (c *Consumer) twoHops() {
	defer c.mu.Unlock()
	c.commitLocked()
}

// commitLocked expects the lock held and the mailbox drained after it.
func (c *Consumer) commitLocked() {
	c.commit()
}

//confined:drain
func (c *Consumer) drain() {
	for {
		select {
		case off := <-c.mailbox:
			c.offset = off
		default:
			return
		}
	}
}

//confined:commit
//confined:requires mu
func (c *Consumer) commit() {}

// withLock runs fn with the lock held.
func (c *Consumer) withLock(fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fn()
}

//confined:entry
func (c *Consumer) closures(tick <-chan struct{}) {
	for range tick {
		c.withLock(func() {
			c.drain()
			c.commit()
		})
		c.drain()
		c.withLock(func() { // want `Consumer\.closures -> Consumer\.closures\.func2 -> Consumer\.commit`
			c.commit()
		})
	}
}
