package right

import (
	"maps"

	"github.com/confinelint/confinelint/confine"
)

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
	go c.logPaused(maps.Clone(c.paused))
}

func (c *Consumer) logPaused(m map[string]bool) { println(len(m)) }

// example:end
