// Package sharedcommit: two foreign roots reach one commit through a helper
// that control's own loop uses correctly. Each inline commit is reported at
// the root's call that leaves its own code (where the handoff belongs),
// once per root, whether the helper is inferred, exported or a method
// value; never inside the helper, which is right on control's goroutine.
package sharedcommit

import (
	"sync"
	"time"
)

type Consumer struct {
	mu      sync.Mutex
	mailbox chan int64
	offset  int64 //confined:control
}

//confined:entry
func (c *Consumer) run(tick <-chan struct{}) {
	for range tick {
		c.flush()
		c.Flush()
	}
}

//confined:callback
func (c *Consumer) onRevoked() {
	c.flush() // want `Consumer\.commit publishes control progress but runs inline on the goroutine running callback Consumer\.onRevoked: Consumer\.onRevoked -> Consumer\.flush -> Consumer\.commit;`
}

//confined:callback
func (c *Consumer) onLost() {
	c.log()
	c.flush() // want `runs inline on the goroutine running callback Consumer\.onLost: Consumer\.onLost -> Consumer\.flush -> Consumer\.commit;`
}

// start's timer reaches the exported helper: the same place, the root's call.
func (c *Consumer) start() {
	time.AfterFunc(time.Second, func() {
		c.Flush() // want `runs inline on the goroutine started by time\.AfterFunc: Consumer\.start\.func1 -> Consumer\.Flush -> Consumer\.flush -> Consumer\.commit;`
	})
}

func (c *Consumer) log() {}

// flush locks, drains and commits: right on control's goroutine.
func (c *Consumer) flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drain()
	c.commit()
}

// Flush is flush as API.
func (c *Consumer) Flush() { c.flush() }

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
