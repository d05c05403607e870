package right

import "github.com/confinelint/confinelint/confine"

type Consumer struct {
	owner  confine.Owner //confined:control poll
	paused bool          //confined:control poll
	polls  int           //confined:control poll
}

// example:start

//confined:entry poll
func (c *Consumer) run() {
	c.owner.Bind()
	for !c.paused {
		c.pollOnce()
	}
}

// example:end

func (c *Consumer) pollOnce() { c.polls++ }
