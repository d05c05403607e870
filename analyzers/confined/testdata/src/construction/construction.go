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

// StartAll makes one consumer per shard, each initialised before its own
// loop starts: silent in every iteration, since each iteration allocates a
// new consumer (publication is per allocation).
func StartAll(n int) []*Consumer {
	var out []*Consumer
	for i := 0; i < n; i++ {
		c := &Consumer{in: make(chan int)}
		c.inflight = i
		go c.run()
		out = append(out, c)
	}
	return out
}

// RestartAll touches the previous iteration's consumer after its loop
// started.
func RestartAll(n int) { // want `RestartAll touches control state \(prev.inflight written: RestartAll -> prev.inflight\) but declares no role`
	var prev *Consumer
	for i := 0; i < n; i++ {
		if prev != nil {
			prev.inflight = 0
		}
		c := &Consumer{in: make(chan int)}
		go c.run()
		prev = c
	}
}
