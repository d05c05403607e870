// Package annotations is the README's example of the annotation language.
package annotations

import (
	"sync"

	"github.com/confinelint/confinelint/confine"
)

type completion struct {
	partition int32
	offset    int64
}

// example:start

type Consumer struct {
	owner    confine.Owner   //confined:control
	inflight int             //confined:control // owned by the control goroutine
	done     map[int32]int64 //confined:control
	mailbox  chan completion // workers send here: the sanctioned way across

	commitMu sync.Mutex //confined:before statsMu // lock order, checked at every acquisition
	statsMu  sync.Mutex
	commits  int //confined:guardedby statsMu
}

// Run is the control goroutine.
//
//confined:entry
func (c *Consumer) Run(stop <-chan struct{}) {
	c.owner.Bind() // runtime half: later Asserts check they run on this goroutine
	for {
		select {
		case <-stop:
			return
		case done := <-c.mailbox:
			c.apply(done)
		}
		c.commitMu.Lock()
		c.drain()
		c.commit()
		c.commitMu.Unlock()
	}
}

// Inflight may be called from other packages: declare and assert.
//
//confined:control
func (c *Consumer) Inflight() int {
	c.owner.Assert()
	return c.inflight
}

// drain applies the completions waiting in the mailbox to control state.
//
//confined:drain
func (c *Consumer) drain() {
	for {
		select {
		case done := <-c.mailbox:
			c.apply(done)
		default:
			return
		}
	}
}

// commit publishes progress: it needs a drain after commitMu is taken.
//
//confined:commit
//confined:requires commitMu
func (c *Consumer) commit() {
	c.statsMu.Lock()
	c.commits++
	c.statsMu.Unlock()
}

// example:end

func (c *Consumer) apply(done completion) {
	c.inflight--
	c.done[done.partition] = done.offset
}
