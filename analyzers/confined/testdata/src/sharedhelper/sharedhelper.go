// Package sharedhelper: an unexported helper reached from the control loop
// and from a spawned goroutine is reported on the spawned path only.
package sharedhelper

import "github.com/confinelint/confinelint/confine"

type Consumer struct {
	owner   confine.Owner
	pending []int //confined:control
	in      chan int
}

//confined:entry
func (c *Consumer) loop() {
	c.owner.Bind()
	for n := range c.in {
		c.enqueue(n)
		if n < 0 {
			go c.retry(n)
		}
	}
}

func (c *Consumer) retry(n int) {
	c.backoff(n)
}

func (c *Consumer) backoff(n int) {
	c.enqueue(-n)
}

func (c *Consumer) enqueue(n int) {
	c.pending = append(c.pending, n) // want `^c\.pending is confined to control but written on the goroutine started by the go statement: Consumer\.retry -> Consumer\.backoff -> Consumer\.enqueue -> c\.pending \[foreign-access\]$`
}

// Gauge.Reset is exported without a role, and also called from a timer
// goroutine in the package: reported at the func and at the call.
type Gauge struct {
	owner confine.Owner
	v     int //confined:control
}

//confined:entry
func (g *Gauge) loop() {
	g.owner.Bind()
	g.v++
}

// Reset zeroes the gauge.
func (g *Gauge) Reset() { g.v = 0 } // want `Gauge.Reset touches control state \(g.v written: Gauge.Reset -> g.v\) but declares no role`

func (g *Gauge) arm() {
	go func() {
		g.Reset() // want `g.v is confined to control but written on the goroutine started by the go statement: Gauge.arm.func1 -> Gauge.Reset -> g.v`
	}()
}
