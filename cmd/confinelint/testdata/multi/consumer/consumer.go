// Package consumer has findings of every analyzer, with call chains and a
// suggested fix, across a package boundary.
package consumer

import (
	"sync"

	"example.com/multi/broker"
	"example.com/multi/pool"
)

type Consumer struct {
	b        *broker.Broker
	p        *pool.Pool
	stateMu  sync.Mutex
	statsMu  sync.Mutex
	records  chan int64
	progress map[int32]int64 //confined:control
	polled   int             //confined:control poll
	hits     int             //confined:guardedby stateMu
}

//confined:entry
func (c *Consumer) loop() {
	c.b.OnRevoked(c.revoked)
	c.p.Run(func() { c.progress[7] = 1 })
	for rec := range c.records {
		c.progress[0] = rec
		c.flush()
	}
}

func (c *Consumer) flush() {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	c.empty()
	c.save()
}

//confined:drain
func (c *Consumer) empty() {
	for len(c.records) > 0 {
		c.progress[1] = <-c.records
	}
}

//confined:requires stateMu
func (c *Consumer) save() { c.b.Commit(c.progress) }

func (c *Consumer) revoked() {
	c.stateMu.Lock()
	c.save()
	c.hits += 2
	c.stateMu.Unlock()
	delete(c.progress, 2)
	c.hits--
}

// Reset is exported, so its callers are unknown: it should declare its role.
func (c *Consumer) Reset() { c.clear() }

func (c *Consumer) clear() { c.progress = nil }

// Polled reads poll state; the role is declared in package broker.
//
//confined:control poll
func (c *Consumer) Polled() int { return c.polled }

// Stats takes the locks in one order ...
func (c *Consumer) Stats() int {
	c.statsMu.Lock()
	defer c.statsMu.Unlock()
	return c.count()
}

// ... and count, called with statsMu held, takes stateMu.
func (c *Consumer) count() int {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	return c.hits
}

// Snapshot takes them in the other order.
func (c *Consumer) Snapshot() {
	c.stateMu.Lock()
	c.statsMu.Lock()
	c.statsMu.Unlock()
	c.stateMu.Unlock()
}

//confined:contrl
func (c *Consumer) typo() {}
