package wrong

import "github.com/confinelint/confinelint/confine"

type Consumer struct {
	owner confine.Owner //confined:control
	in    chan string
	// example:start

	paused map[string]bool //confined:control
	// example:end
}

//confined:entry
func (c *Consumer) run() {
	c.owner.Bind()
	for range c.in {
		c.pause()
	}
}

// example:start

func (c *Consumer) pause() {
	go c.logPaused(c.paused) // want `c\.paused is confined to control but handed to the goroutine started by the go statement, where Consumer\.logPaused reads it: Consumer\.logPaused -> len\(m\); pass a copy \(maps\.Clone, slices\.Clone\) or send it to its new owner on a channel \[owned-handoff\]`
}

func (c *Consumer) logPaused(m map[string]bool) { println(len(m)) }

// example:end
