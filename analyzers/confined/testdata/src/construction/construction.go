// Package construction: initialising a new object before it is published
// is construction; touching it after its goroutine started is not.
package construction

import "github.com/confinelint/confinelint/confine"

type Consumer struct {
	owner    confine.Owner
	inflight int             //confined:control
	offsets  map[int32]int64 //confined:control
	in       chan int
}

//confined:entry
func (c *Consumer) run() {
	c.owner.Bind()
	for n := range c.in {
		c.inflight += n
	}
}

// NewConsumer initialises, then starts the loop: silent.
func NewConsumer() *Consumer {
	c := &Consumer{in: make(chan int), offsets: map[int32]int64{}}
	c.inflight = 1
	c.offsets[0] = 0
	go c.run()
	return c
}

// NewRacy writes after the loop started, on its callers' goroutine.
func NewRacy() *Consumer { // want `NewRacy touches control state \(c.inflight written: NewRacy -> c.inflight\) but declares no role`
	c := &Consumer{in: make(chan int)}
	go c.run()
	c.inflight = 1
	return c
}

// newCaptured initialises through a captured variable before the
// closure that publishes it runs: silent.
func newCaptured() *Consumer {
	c := &Consumer{in: make(chan int)}
	c.inflight = 2
	go func() { c.run() }()
	return c
}

var _ = newCaptured
