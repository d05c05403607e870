package right

import "github.com/confinelint/confinelint/confine"

type Consumer struct {
	owner confine.Owner //confined:control poll
	polls int           //confined:control poll
}

// example:start

//confined:entry poll
func (c *Consumer) run() {
	c.owner.Bind()
	c.fetch()
}

//confined:control poll
func (c *Consumer) fetch() { c.polls++ }

// example:end
