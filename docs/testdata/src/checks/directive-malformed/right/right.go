package right

import "github.com/confinelint/confinelint/confine"

type Consumer struct {
	owner confine.Owner //confined:control poll
	polls int           //confined:control poll
}

//confined:entry poll
func (c *Consumer) run() {
	c.owner.Bind()
	c.poll()
}

// example:start

//confined:control poll
func (c *Consumer) poll() { c.polls++ }

// example:end
