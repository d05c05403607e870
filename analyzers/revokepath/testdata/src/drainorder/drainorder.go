// Package drainorder: drains that do not count.
package drainorder

import "sync"

type Consumer struct {
	mu      sync.Mutex
	mailbox chan int64
	pollbox chan int64
	offset  int64 //confined:control
	ready   bool
}

//confined:entry
func (c *Consumer) run(tick <-chan struct{}) {
	for range tick {
		c.drainThenLock()
		c.conditionalDrain()
		c.emptinessCheck()
		c.branches()
		c.lockDrainCommit()
		c.loopDrain()
		c.noLockCommit()
		c.publishAfterDrain()
		c.wrongRole()
		c.retry(3)
		c.methodValue()
	}
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

//confined:commit
func (c *Consumer) publish() {}

// A drain before taking the lock does not count: completions can arrive
// between the drain and the lock.
func (c *Consumer) drainThenLock() {
	c.drain()
	c.mu.Lock()
	c.commit() // want `commit Consumer\.commit \(publishes control progress\) can run without a drain of control's mailbox after Consumer\.mu is taken: Consumer\.drainThenLock -> Consumer\.commit`
	c.mu.Unlock()
}

// A drain on some paths only does not count.
func (c *Consumer) conditionalDrain() {
	c.mu.Lock()
	if len(c.mailbox) > 0 {
		c.drain()
	}
	c.commit() // want `can run without a drain of control's mailbox after Consumer\.mu is taken: Consumer\.conditionalDrain -> Consumer\.commit`
	c.mu.Unlock()
}

// Checking that the mailbox is empty is not a drain.
func (c *Consumer) emptinessCheck() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.mailbox) == 0 {
		c.commit() // want `Consumer\.emptinessCheck -> Consumer\.commit \[commit-without-drain\]`
	}
}

// Drained on every branch: correct.
func (c *Consumer) branches() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ready {
		c.drain()
	} else {
		c.drain()
		c.ready = true
	}
	c.commit()
}

func (c *Consumer) lockDrainCommit() {
	c.mu.Lock()
	c.drain()
	c.commit()
	c.mu.Unlock()
}

// The loop re-takes the lock each iteration; the drain inside follows it.
func (c *Consumer) loopDrain() {
	for i := 0; i < 3; i++ {
		c.mu.Lock()
		c.drain()
		c.commit()
		c.mu.Unlock()
	}
	c.mu.Lock()
	c.commit() // want `Consumer\.loopDrain -> Consumer\.commit`
	c.mu.Unlock()
}

// A commit that requires no lock needs a drain before it on every path; the
// caller (run) has none, so it is reported there.
func (c *Consumer) noLockCommit() {
	c.publish()
}

func (c *Consumer) publishAfterDrain() {
	c.drain()
	c.publish()
}

//confined:entry
func (c *Consumer) other(tick <-chan struct{}) {
	for range tick {
		c.noLockCommit() // want `commit Consumer\.publish \(publishes control progress\) can run without a drain of control's mailbox before it: Consumer\.other -> Consumer\.noLockCommit -> Consumer\.publish`
	}
}

//confined:entry poll
func (c *Consumer) pollLoop() {}

//confined:drain poll
func (c *Consumer) drainPoll() {
	for range len(c.pollbox) {
		<-c.pollbox
	}
}

// A drain of another role's mailbox does not count.
func (c *Consumer) wrongRole() {
	c.mu.Lock()
	c.drainPoll()
	c.commit() // want `Consumer\.wrongRole -> Consumer\.commit \[commit-without-drain\]`
	c.mu.Unlock()
}

// Recursion converges: every path to the commit drains after the lock.
func (c *Consumer) retry(n int) {
	if n > 0 {
		c.retry(n - 1)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drain()
	c.commit()
}

// A method value called directly is a call of the method.
func (c *Consumer) methodValue() {
	c.mu.Lock()
	defer c.mu.Unlock()
	commit := c.commit
	commit() // want `Consumer\.methodValue -> Consumer\.commit \[commit-without-drain\]`
}
