package wrong

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

//confined:control pol // want `role "pol" is not declared by any //confined:entry in this package or its imports; did you mean "poll"\? \[directive-role\]`
func (c *Consumer) fetch() { c.polls++ }

// example:end
