package wrong

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

// confined:control poll // want `this is an ordinary comment, not a directive: the space after // hides it from confinelint \(and go doc shows it\); write //confined:control poll.*\[directive-malformed\]`
func (c *Consumer) poll() { c.polls++ }

// example:end
