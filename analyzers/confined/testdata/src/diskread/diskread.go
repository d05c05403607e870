// Package diskread: a disk-read worker advances the owner's offsets
// itself (buggy) or reports completion to the owner (fixed).
package diskread

import "github.com/confinelint/confinelint/confine"

type Buggy struct {
	owner   confine.Owner
	offsets map[int32]int64 //confined:control
	reads   chan int32
}

//confined:entry
func (c *Buggy) run() {
	c.owner.Bind()
	for p := range c.reads {
		go func() {
			c.offsets[p] = read(p) // want `c.offsets is confined to control but written on the goroutine started by the go statement: Buggy.run.func1 -> c.offsets`
		}()
	}
}

func read(p int32) int64 { return int64(p) }

type result struct {
	part int32
	off  int64
}

type Fixed struct {
	owner   confine.Owner
	offsets map[int32]int64 //confined:control
	reads   chan int32
	done    chan result
}

//confined:entry
func (c *Fixed) run() {
	c.owner.Bind()
	for {
		select {
		case p := <-c.reads:
			go func() {
				c.done <- result{part: p, off: read(p)}
			}()
		case r := <-c.done:
			c.offsets[r.part] = r.off
		}
	}
}

// A completion value of a confined type is owned by whoever received it.
//
//confined:control
type batch struct{ n int }

// applyBatches runs on its own goroutine and owns what it receives.
func (c *Fixed) applyBatches(in chan *batch) {
	for b := range in {
		b.n++
	}
}

func (c *Fixed) worker(out chan *batch) {
	b := &batch{}
	b.n = 1
	out <- b
}

func (c *Fixed) start(ch chan *batch) {
	go c.worker(ch)
	go c.applyBatches(ch)
}
