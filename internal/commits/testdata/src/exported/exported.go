// Package exported: which exported functions carry a commit fact.
package exported

import "sync"

type Consumer struct {
	Mu      sync.Mutex
	mailbox chan int64
	offset  int64 //confined:control
}

//confined:entry
func (c *Consumer) loop() {}

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

func (c *Consumer) CommitLocked() { // want `CommitLocked:commits\(undrained control after Consumer\.Mu: exported\.Consumer\.CommitLocked -> exported\.Consumer\.commitLocked -> exported\.Consumer\.commit; reaches control: exported\.Consumer\.CommitLocked -> exported\.Consumer\.commitLocked -> exported\.Consumer\.commit\)`
	c.commitLocked()
}

func (c *Consumer) commitLocked() { c.commit() }

func (c *Consumer) Flush() { // want `Flush:commits\(reaches control: exported\.Consumer\.Flush -> exported\.Consumer\.commit\)`
	c.Mu.Lock()
	defer c.Mu.Unlock()
	c.Drain()
	c.commit()
}

func (c *Consumer) Both() { // want `Both:commits\(undrained control: exported\.Consumer\.Both -> exported\.Consumer\.publish; undrained control after Consumer\.Mu: exported\.Consumer\.Both -> exported\.Consumer\.CommitLocked -> exported\.Consumer\.commitLocked -> exported\.Consumer\.commit; reaches control: exported\.Consumer\.Both -> exported\.Consumer\.publish\)`
	c.publish()
	c.CommitLocked()
}

// Unrelated has no commit: no fact.
func (c *Consumer) Unrelated() { c.Mu.Lock(); c.Mu.Unlock() }

//confined:commit
//confined:requires Mu
func (c *Consumer) commit() {}

//confined:commit
func (c *Consumer) publish() {}
